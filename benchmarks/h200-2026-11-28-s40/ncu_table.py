# Session 40: the table of call 1's Nsight Compute metrics per kernel (ncu --csv output), as
# call1/ncu_<spec>.txt: duration, achieved occupancy, instructions, issue, L1 wavefronts,
# DRAM, launch limits, then the stall reasons.
#   python3 ncu_table.py call1/ncu_green_blocks17.csv [KERNEL-NAME-PART...]
import csv,sys,collections
rows=list(csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')))
h=rows[0]; ki=h.index("Kernel Name"); mi=h.index("Metric Name"); vi=h.index("Metric Value"); ii=h.index("ID")
K=collections.OrderedDict()
for r in rows[1:]:
    K.setdefault((r[ii],r[ki].split('(')[0]),{})[r[mi]]=r[vi].replace(',','')
short={'gpu__time_duration.sum':'dur','sm__warps_active.avg.pct_of_peak_sustained_active':'occ%','smsp__inst_executed.sum':'inst',
'smsp__issue_active.avg.pct_of_peak_sustained_active':'issue%','l1tex__data_pipe_lsu_wavefronts.sum':'wf','l1tex__data_pipe_lsu_wavefronts_mem_shared.sum':'wfsh',
'l1tex__throughput.avg.pct_of_peak_sustained_active':'l1%','l1tex__t_sector_hit_rate.pct':'hit%','dram__bytes_read.sum':'drR','dram__bytes_write.sum':'drW',
'dram__throughput.avg.pct_of_peak_sustained_elapsed':'dram%','launch__block_size':'blk','launch__registers_per_thread':'regs','launch__waves_per_multiprocessor':'waves',
'launch__occupancy_limit_blocks':'limB','launch__occupancy_limit_warps':'limW','launch__occupancy_limit_registers':'limR','launch__occupancy_limit_shared_mem':'limS'}
stalls=[m for m in next(iter(K.values())) if 'stalled' in m]
sel=sys.argv[2:] or None
print("%-14s"%"kernel"+"".join("%9s"%v for v in short.values()))
for (i,k),m in K.items():
    if sel and not any(s in k for s in sel): continue
    print("%-14s"%k[4:]+"".join("%9.4g"%float(m.get(n,'nan')) for n in short))
print()
print("%-14s"%"stalls"+"".join("%8s"%s.split('stalled_')[1].split('_per')[0][:7] for s in stalls))
for (i,k),m in K.items():
    if sel and not any(s in k for s in sel): continue
    print("%-14s"%k[4:]+"".join("%8.1f"%float(m.get(s,'nan')) for s in stalls))
