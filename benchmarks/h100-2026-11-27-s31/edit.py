import sys, re
v, path = sys.argv[1], sys.argv[2]
src = open(path).read()
start = src.index('kas_cand01_k1(')
start = src.rindex('__global__', 0, start)
end = src.index('\n}\n', start) + 3
k = src[start:end]
def sub(old, new, count=1):
    global k
    assert old in k, old
    k = k.replace(old, new, count)
if v in ('v1','v2','v3','v4'):
    sub('''  if (N == 0) /* one group loads the copy that every group reads */
    d_ttmul411_1_load_0_e64_s(g_ten4Help1, s_ten4Help1_0, tx, e0, n);
''', '')
    sub('  kas_stage_in<4>(st_vec3DPhi', '  kas_stage_in<4>(s_ten4Help1_0, g_ten4Help1 + e0 * 81, 5184, (int)ne * 81, lin_block, 256);\n  kas_stage_in<4>(st_vec3DPhi')
smem = 63744
if v in ('v2','v3'):
    sub('st_vec3DPhi = (float *)kas_smem + 5184', 'st_vec3DPhi = (float *)kas_smem + 9216')
    sub('st_vec3NodeStiff = (float *)kas_smem + 5952', 'st_vec3NodeStiff = (float *)kas_smem + 9984')
    sub('st_matTangent = (float *)kas_smem + 6720', 'st_matTangent = (float *)kas_smem + 0')
    sub('d_ttmul411_1_compute_e64_srr(s_ten4Help1_0, r_vec3NodeStiff_N_0, r_ten3Help1_0, tx);\n',
        'd_ttmul411_1_compute_e64_srr(s_ten4Help1_0, r_vec3NodeStiff_N_0, r_ten3Help1_0, tx);\n  __syncthreads(); /* ten4Help1 read: matTangent may overwrite it */\n')
    smem = 43008
if v == 'v3':
    sub('__launch_bounds__(256)', '__launch_bounds__(256, 5)')
if v == 'v4':
    for x in ['', ' + 9', ' + 18', ' + 27']:
        sub('st_matTangent + 36 * N%s, tx, 0, ne)' % x, 'g_matTangent + 36 * N%s, tx, e0, n)' % x)
    k = re.sub(r'  /\* matTangent: the block.*\n.*kas_stage_out<4>\(st_matTangent.*\n', '', k)
    smem = 26880
src = src[:start] + k + src[end:]
if smem != 63744:
    a = src.index('kas_cand01_k1, cudaFuncAttributeMaxDynamicSharedMemorySize, 63744')
    src = src[:a] + src[a:].replace('63744', str(smem), 2)
open(path, 'w').write(src)
