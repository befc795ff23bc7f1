# Session 40: the register limit on resident blocks per SM that Nsight Compute reported
# (launch__occupancy_limit_registers) against two rules, for every kernel of the given ncu CSVs:
# "old" the model's (65536 registers / registers per warp / warps per block), "new" one quarter
# of the registers per scheduler holding whole warps (occupancy_subpartitions.patch).
#   python3 register_limit.py ../h200-2026-11-28-s39/call1/*.csv call1/*.csv
import csv,sys,collections
for f in sys.argv[1:]:
    rows=list(csv.reader(l for l in open(f) if l.startswith('"')))
    h=rows[0]; ki=h.index("Kernel Name"); mi=h.index("Metric Name"); vi=h.index("Metric Value"); ii=h.index("ID")
    K=collections.OrderedDict()
    for r in rows[1:]: K.setdefault((r[ii],r[ki].split('(')[0]),{})[r[mi]]=float(r[vi].replace(',',''))
    for (i,k),m in K.items():
        if 'launch__registers_per_thread' not in m: continue
        regs=int(m['launch__registers_per_thread']); t=int(m['launch__block_size']); w=(t+31)//32
        rpw=-(-regs*32//256)*256
        old=65536//rpw//w; new=(16384//rpw*4)//w
        print("%-12s regs %3d threads %4d ncu %3d old %3d new %3d %s"%(k[4:],regs,t,m['launch__occupancy_limit_registers'],old,new,'' if new==m['launch__occupancy_limit_registers'] else 'MISMATCH'))
