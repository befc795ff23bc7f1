import sys
v, path = sys.argv[1], sys.argv[2]
src = open(path).read()
start = src.index('kas_cand01_k1(')
start = src.rindex('__global__', 0, start)
end = src.index('\n}\n', start) + 3
k = src[start:end]
def sub(old, new):
    global k
    assert old in k, old
    k = k.replace(old, new, 1)
bar = '  /* ttmul411#2 compute */\n'
if v in ('w1', 'w3'):  # the plan's barrier back, before ttmul411's compute
    sub(bar, '  __syncthreads(); /* experiment: the plan\'s barrier */\n' + bar)
if v in ('w2', 'w3'):  # ten4Help1's copy issued before vec3DPhi's
    a = k.index('  /* ten4Help1: the block')
    b = k.index('\n', k.index('kas_stage_in<4>(s_ten4Help1_0', a)) + 1
    t4 = k[a:b]
    k = k[:a] + k[b:]
    c = k.index('  /* vec3DPhi: the block')
    k = k[:c] + t4 + k[c:]
src = src[:start] + k + src[end:]
open(path, 'w').write(src)
