# Session 40, on the host: the model's register estimate against ptxas's count, per distinct
# kernel of the measured runs, from dumps of terms_dump.patch made with --ptxas (fit_terms.py
# says how), and a linear refit of ptxas's count on the estimate's bound.
#   python3 register_estimate.py d100.tsv d200.tsv
import numpy as np, sys
cols="spec id k nk meas launch e threads groups smem barriers ncalls regs spillb loops onecopy work floor barrier spill io compute r1 rs rsc lines bw wf kpred bpsm idle nsteps swf mwf est fromptx".split()
for f in sys.argv[1:]:
    rows=[l.rstrip('\n').split('\t') for l in open(f)]
    D={c:np.array([r[i] for r in rows]) for i,c in enumerate(cols)}
    for c in cols[1:]: D[c]=D[c].astype(float)
    m=D['fromptx']==1
    # distinct kernels: dedupe on (spec, e, threads, regs, est, ncalls, smem)
    key=set(); idx=[]
    for i in np.where(m)[0]:
        k=(D['spec'][i],D['e'][i],D['threads'][i],D['regs'][i],D['est'][i],D['ncalls'][i],D['smem'][i],D['barriers'][i])
        if k not in key: key.add(k); idx.append(i)
    idx=np.array(idx)
    p=D['regs'][idx]; e=D['est'][idx]; tpe=D['threads'][idx]/D['e'][idx]
    print(f, "kernels with ptxas:", m.sum(), "distinct:", len(idx))
    print("  mean ptxas %.1f, mean estimate %.1f, mean |est-ptxas| %.1f, est low by >8: %d, high by >8: %d"%(p.mean(),e.mean(),np.abs(e-p).mean(),(p-e>8).sum(),(e-p>8).sum()))
    for t in np.unique(tpe):
        s=tpe==t
        print("  tpe %g: n=%d ptxas %.1f est %.1f mean(est-ptxas) %+.1f"%(t,s.sum(),p[s].mean(),e[s].mean(),(e[s]-p[s]).mean()))
print("fit ptxas = a + b*bound (bound ~ est/0.63 where est > 24), both GPUs' kernels")
P=[];B=[]
for f in sys.argv[1:]:
    rows=[l.rstrip('\n').split('\t') for l in open(f)]
    for r in rows:
        if r[-1]=='1' and int(r[-2])>24: P.append(float(r[12])); B.append(float(r[-2])/0.63)
P=np.array(P);B=np.array(B)
A=np.vstack([np.ones_like(B),B]).T
(a,b),*_=np.linalg.lstsq(A,P,rcond=None)
print("  n=%d a=%.1f b=%.3f MAE %.1f (0.63*bound: %.1f)"%(len(P),a,b,np.abs(a+b*B-P).mean(),np.abs(0.63*B-P).mean()))
