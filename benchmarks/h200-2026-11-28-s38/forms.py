#!/usr/bin/env python3
"""Session 38: the calibration forms tried, held out by spec (leave one spec out), in Python.

Usage: forms.py DUMP NPLAIN [FORM...]
DUMP: what `kasgen calibrate RUNS --db DB` wrote with a local patch of 38d4461 (not committed):
per sample `C spec rank nkernels measured-ns launch-ns`, then per kernel `K` and the ModelTerms
work floor barrier spill io compute requests_one requests_shared requests_shared_covered lines,
then the load phases (runs of load steps no barrier separates; a staged input copy is one),
the barriers and the load steps, each over the elements resident on the GPU, the resident
elements, threads per element and E.  NPLAIN: the runs of the dump that are plain top-30 runs
(the first, in folder order; the rest are runs with block shapes).
's33' is the committed form before this session (its held-out counts match `kasgen calibrate
--held-out` exactly on both GPUs); 'A_barW1' is the form committed in 43337a8 (w · barriers ·
warps per block / resident elements); the others add a block's load phases, or a power of the
warps, and are not kept (benchmarks/RESULTS.md, session 38).
"""
import sys, numpy as np
from scipy.optimize import least_squares
from scipy.stats import spearmanr
KC="work floor barrier spill io compute r1 rs cov lines ph bars lds res tpe e".split()
def load(fn):
    cands=[]; run=-1; prev=None
    for line in open(fn):
        f=line.split()
        if f[0]=='C':
            if f[1]!=prev: run+=1; prev=f[1]
            cur={'spec':f[1],'run':run,'rank':int(f[2]),'nk':int(f[3]),'meas':float(f[4]),'launch':float(f[5]),'ks':[]}; cands.append(cur)
        else: cur['ks'].append(dict(zip(KC,map(float,f[1:]))))
    return cands
cands=load(sys.argv[1])
specs=sorted(set(c['spec'] for c in cands)); runs=sorted(set(c['run'] for c in cands))
meas=np.array([c['meas'] for c in cands]); spec_of=np.array([c['spec'] for c in cands]); run_of=np.array([c['run'] for c in cands])
launch=np.array([c['launch'] for c in cands])
ci=np.array([i for i,c in enumerate(cands) for k in c['ks']])
F={k:np.array([kk[k] for c in cands for kk in c['ks']]) for k in KC}
def csum(v): return np.bincount(ci,weights=v,minlength=len(cands))
base=F['io']-F['r1']-F['rs']-F['lines']
def ioL(t):
    a,r1,rs,l,b,c,p,s=t[:8]
    req=r1*F['r1']+rs*(F['rs']+s*(F['cov']-F['rs']/2)); rest=base+l*F['lines']
    ok=(req>0)&(rest>0)
    return np.where(ok,(np.maximum(req,1e-30)**p+np.maximum(rest,1e-30)**p)**(1/p),req+rest)
def comb(work,t): return launch+csum(np.hypot(work,F['floor'])+t[4]*F['barrier']+F['spill']+t[5])
def s33(t): return comb(t[0]*np.maximum(ioL(t),F['compute']),t)
def chain(t): return t[8]*F['ph']+t[9]*F['bars']+t[10]*F['lds']
def third(t): return comb(t[0]*np.maximum(np.maximum(ioL(t),F['compute']),chain(t)),t)
def added(t): return comb(t[0]*np.maximum(ioL(t),F['compute'])+chain(t),t)
def pnorm(t):
    w=t[0]*np.maximum(ioL(t),F['compute']); ch=chain(t); q=t[11]
    return comb((w**q+ch**q)**(1/q),t)
X0=[1,1,1,1,1,0,1,0]; LO=[.5,.25,.25,.25,0,0,1,-1.99]; HI=[1.5,4,4,4,100,1,4,1.99]
W=F['tpe']*F['e']/32
def chainW(t): return t[8]*F['ph']+t[9]*F['bars']*W**t[10]
def thirdW(t): return comb(t[0]*np.maximum(np.maximum(ioL(t),F['compute']),chainW(t)),t)
def addedW(t): return comb(t[0]*np.maximum(ioL(t),F['compute'])+chainW(t),t)
def barW(t): # the barrier term scaled by warps per block
    return launch+csum(np.hypot(t[0]*np.maximum(ioL(t),F['compute']),F['floor'])+t[4]*F['barrier']*W**t[8]+F['spill']+t[5])
def mk(ch):
    return lambda t: comb(t[0]*np.maximum(ioL(t),F['compute'])+ch(t),t)
forms0={
 'A_barW1':(mk(lambda t:t[8]*F['bars']*W),X0+[5],LO+[0],HI+[20000]),
 'A_ph_barW1':(mk(lambda t:t[8]*F['ph']+t[9]*F['bars']*W),X0+[50,5],LO+[0,0],HI+[20000,20000]),
 'A_barWg':(mk(lambda t:t[8]*F['bars']*W**t[9]),X0+[5,1],LO+[0,0],HI+[20000,3]),
 'A_phW_barW':(mk(lambda t:t[8]*F['ph']*W+t[9]*F['bars']*W),X0+[5,5],LO+[0,0],HI+[20000,20000]),
 'A_ld_barW':(mk(lambda t:t[8]*F['lds']+t[9]*F['bars']*W),X0+[50,5],LO+[0,0],HI+[20000,20000]),
 'A_ph_barW_nob':(lambda t: launch+csum(np.hypot(t[0]*np.maximum(ioL(t),F['compute']),F['floor'])+F['spill']+t[5]+t[8]*F['ph']+t[9]*F['bars']*W),X0+[50,5],LO+[0,0],HI+[20000,20000]),
}
forms0.update({
 'A_phT_barW':(mk(lambda t:t[8]*F['ph']*(1-1/F['tpe'])+t[9]*F['bars']*W),X0+[50,5],LO+[0,0],HI+[20000,20000]),
 'A_ldT_barW':(mk(lambda t:t[8]*F['lds']*(1-1/F['tpe'])+t[9]*F['bars']*W),X0+[50,5],LO+[0,0],HI+[20000,20000]),
 'A_phT':(mk(lambda t:t[8]*F['ph']*(1-1/F['tpe'])),X0+[50],LO+[0],HI+[20000]),
 'A_barT_barW':(mk(lambda t:t[8]*F['bars']*(1-1/F['tpe'])+t[9]*F['bars']*W),X0+[50,5],LO+[0,0],HI+[20000,20000]),
})
forms={'thirdW':(thirdW,X0+[500,50,1],LO+[0,0,0],HI+[20000,20000,3]),
 'addedW':(addedW,X0+[50,5,1],LO+[0,0,0],HI+[20000,20000,3]),
 'barW':(barW,X0+[0.5],LO+[0],HI+[3]),
 's33':(s33,X0,LO,HI),
 'third':(third,X0+[500,500,0],LO+[0,0,0],HI+[20000,20000,5000]),
 'added':(added,X0+[50,50,0],LO+[0,0,0],HI+[20000,20000,5000]),
 'pnorm':(pnorm,X0+[500,500,0,4],LO+[0,0,0,1],HI+[20000,20000,5000,16]),
}
def figures(pred,mask):
    out={}
    for r in sorted(set(run_of[mask])):
        m=mask&(run_of==r); p=pred[m]; y=meas[m]
        span=y.max()/y.min()-1
        rho=spearmanr(p,y)[0] if len(y)>2 else np.nan
        gap=y[np.argmin(p)]/y.min()-1
        err=np.mean(np.abs(p-y)/y)
        out[r]=(len(y),span,rho,gap,err)
    return out
def summary(fig,label):
    rho_ok=sum(1 for v in fig.values() if v[1]>0.10 and v[2]>=0.8); rho_n=sum(1 for v in fig.values() if v[1]>0.10)
    gap_ok=sum(1 for v in fig.values() if v[3]<=0.02); err_ok=sum(1 for v in fig.values() if v[4]<=0.05)
    n=len(fig); me=np.mean([v[4] for v in fig.values()]); gm=np.mean([v[3] for v in fig.values()])
    return f'{label:14s} rho {rho_ok}/{rho_n}  #1 {gap_ok}/{n}  err {err_ok}/{n}  mean err {me*100:.2f}%  mean gap {gm*100:.2f}%'
forms.update(forms0)
only=sys.argv[3:] or list(forms)
NPLAIN=int(sys.argv[2])
plain_runs=set(c['run'] for c in cands if c['rank']<=30)  # all
for name in [n for n in only if n in forms]:
    f,x0,lo,hi=forms[name]
    pred=np.zeros(len(cands))
    for s in specs:
        train=spec_of!=s
        t=least_squares(lambda t:(f(t)[train]-meas[train])/meas[train],x0,bounds=(lo,hi)).x
        pred[spec_of==s]=f(t)[spec_of==s]
    tall=least_squares(lambda t:(f(t)-meas)/meas,x0,bounds=(lo,hi)).x
    fig=figures(pred,np.ones(len(cands),bool))
    # split by run kind: runs numbered in folder order: first the p_ runs

    print(name, 'all-fit params', np.round(tall,3))
    print(summary(fig,'  all runs'))
    P={r:v for r,v in fig.items() if r<NPLAIN}; V={r:v for r,v in fig.items() if r>=NPLAIN}
    print(summary(P,'  plain runs')); print(summary(V,'  var runs'))
if 'DETAIL' in __import__('os').environ:
    f,x0,lo,hi=forms['third']
    tall=least_squares(lambda t:(f(t)-meas)/meas,x0,bounds=(lo,hi)).x
    p3=f(tall); f0,x0,lo,hi=forms['s33']; t0=least_squares(lambda t:(f0(t)-meas)/meas,x0,bounds=(lo,hi)).x; p0=f0(t0)
    ch=chain(tall)*tall[0]; w=tall[0]*np.maximum(ioL(tall),F['compute'])
    for i,c in enumerate(cands):
        if c['run']>=NPLAIN and c['spec'] in __import__('os').environ['DETAIL'].split():
            ks=np.where(ci==i)[0]
            print('%-16s r%-2d meas %.4f s33 %.4f third %.4f | '%(c['spec'],c['rank'],c['meas'],p0[i],p3[i])+' '.join('[ph %d bar %d ld %d res %d tpe %.0f ch %.4f w %.4f]'%(F['ph'][k]*F['res'][k],F['bars'][k]*F['res'][k],F['lds'][k]*F['res'][k],F['res'][k],F['tpe'][k],ch[k],w[k]) for k in ks))
if __import__('os').environ.get('PLAIN'):
    def plainf(L,B,bs=1.0):
        w=F['work']; return launch+csum(np.hypot(w,F['floor'])+bs*F['barrier']+F['spill']+L*F['ph']+B*F['bars']*W)
    fig=figures(plainf(0,0),np.ones(len(cands),bool)); print(summary({r:v for r,v in fig.items() if r<NPLAIN},'plain p'), summary({r:v for r,v in fig.items() if r>=NPLAIN},'plain v'))
    for L,B in [(200,10),(300,15),(490,25),(600,30),(600,0),(0,30)]:
        fig=figures(plainf(L,B),np.ones(len(cands),bool))
        print(L,B,summary({r:v for r,v in fig.items() if r<NPLAIN},'p'), summary({r:v for r,v in fig.items() if r>=NPLAIN},'v'))
if __import__('os').environ.get('CMP'):
    a,b=__import__('os').environ['CMP'].split()
    res={}
    for name in (a,b):
        f,x0,lo,hi=forms[name]; pred=np.zeros(len(cands))
        for s in specs:
            train=spec_of!=s
            t=least_squares(lambda t:(f(t)[train]-meas[train])/meas[train],x0,bounds=(lo,hi)).x
            pred[spec_of==s]=f(t)[spec_of==s]
        res[name]=figures(pred,np.ones(len(cands),bool))
    for r in sorted(res[a]):
        x=res[a][r]; y=res[b][r]; sp=[c['spec'] for c in cands if c['run']==r][0]
        print('%-28s %s n%-3d span %5.1f%% | rho %.3f gap %.1f%% err %.1f%% | rho %.3f gap %.1f%% err %.1f%%'%(sp,'p' if r<NPLAIN else 'v',x[0],x[1]*100,x[2],x[3]*100,x[4]*100,y[2],y[3]*100,y[4]*100))
