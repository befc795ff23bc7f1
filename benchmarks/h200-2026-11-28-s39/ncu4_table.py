#!/usr/bin/env python3
# Session 39: call 4's Nsight CSVs (ncu4_<folder>.csv), one line per kernel: duration (ns, n = 1048576),
# L1 throughput (% of peak), then per element: L1 data-pipe wavefronts (all, shared), global-load
# output wavefronts, sectors and requests, shared bank conflicts, LSU instructions; L1 writeback
# and DRAM throughput (% of peak).  Usage: ncu4_table.py call4/ncu4_*.csv
import csv,io,sys,collections
S={'gpu__time_duration.sum':'ns','l1tex__throughput.avg.pct_of_peak_sustained_active':'L1%','l1tex__data_pipe_lsu_wavefronts.sum':'wf','l1tex__data_pipe_lsu_wavefronts_mem_shared.sum':'wfS','l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum':'owfG','l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum':'sec','l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum':'req','l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum':'bank','sm__inst_executed_pipe_lsu.sum':'lsuI','l1tex__lsu_writeback_active.avg.pct_of_peak_sustained_active':'wb%','dram__throughput.avg.pct_of_peak_sustained_elapsed':'dram%'}
for fn in sys.argv[1:]:
    lines=[l for l in open(fn) if l.startswith('"')]
    K=collections.OrderedDict()
    for r in csv.DictReader(io.StringIO(''.join(lines))):
        K.setdefault(r['Kernel Name'].split('(')[0],{})[S[r['Metric Name']]]=float(r['Metric Value'].replace(',',''))
    print('==',fn.split('/')[-1]); cols=list(S.values())
    print(f"{'kernel':15s}"+''.join(f'{c:>8s}' for c in cols)+'  (counts per element)')
    for k,v in K.items():
        out=[]
        for c in cols:
            x=v.get(c,float('nan'))
            if c not in ('L1%','wb%','dram%','ns'): x/=1048576
            out.append(f'{x:8.1f}' if c!='ns' else f'{x:8.0f}')
        print(f'{k:15s}'+''.join(out))
