#!/usr/bin/env python3
"""Session 39: one line per kernel of an Nsight Compute CSV of call1.sh (ncu_<folder>.csv):
duration (ns, n = 1048576), DRAM MB read and written, L1 hit rate, L2 sectors read from L1
(thousands), global load sectors and requests (thousands), warps active (% of peak), registers,
occupancy limits, block size, and the % of active warps stalled on long scoreboard, barrier,
LG throttle, MIO throttle and short scoreboard.  Usage: ncu_table.py ncu_bigfusion.csv"""
import collections
import csv
import io
import sys

SHORT = {
    'gpu__time_duration.sum': 'ns',
    'dram__bytes_read.sum': 'dramR',
    'dram__bytes_write.sum': 'dramW',
    'l1tex__t_sector_hit_rate.pct': 'L1hit%',
    'lts__t_sectors_srcunit_tex_op_read.sum': 'L2rdSec',
    'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum': 'ldSec',
    'l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum': 'ldReq',
    'sm__warps_active.avg.pct_of_peak_sustained_active': 'occ%',
    'launch__registers_per_thread': 'regs',
    'launch__occupancy_limit_registers': 'limR',
    'launch__occupancy_limit_shared_mem': 'limS',
    'launch__occupancy_limit_blocks': 'limB',
    'launch__block_size': 'bs',
    'smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct': 'stLS',
    'smsp__warp_issue_stalled_barrier_per_warp_active.pct': 'stBar',
    'smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct': 'stLG',
    'smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct': 'stMIO',
    'smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct': 'stSS',
}
COLS = list(SHORT.values())


def cell(col, value):
    try:
        x = float(value.replace(',', ''))
    except ValueError:
        return f'{value:>9s}'
    if col in ('dramR', 'dramW'):
        x /= 1e6
    if col in ('L2rdSec', 'ldSec', 'ldReq'):
        x /= 1e3
    return f'{x:9.1f}' if x < 1e5 else f'{x:9.0f}'


lines = [line for line in open(sys.argv[1]) if line.startswith('"')]
kernels = collections.OrderedDict()
for row in csv.DictReader(io.StringIO(''.join(lines))):
    name = row['Kernel Name'].split('(')[0]
    kernels.setdefault(name, {})[SHORT.get(row['Metric Name'], row['Metric Name'])] = \
        row['Metric Value']
print(f"{'kernel':18s}" + ''.join(f'{c:>9s}' for c in COLS))
for name, metrics in kernels.items():
    print(f'{name:18s}' + ''.join(cell(c, metrics.get(c, '')) for c in COLS))
