# Turns a 13.4 corpus file into 13.5 bytecode as NVIDIA's 13.5 reader expects it
# (kernel entries carry hints plus one more attribute; DISubprogram has a
# flags varint). Found by experiment with tileirdisasm 13.5; made the
# *.v13_5.tileirbc files next to this directory.
import glob, os, struct, subprocess, sys, tempfile
def rv(d,i):
    r=0;s=0
    while True:
        b=d[i];i+=1;r|=(b&0x7f)<<s;s+=7
        if not b&0x80: return r,i
def ev(x):
    o=bytearray()
    while True:
        b=x&0x7f;x>>=7
        if x: o.append(b|0x80)
        else: o.append(b); return bytes(o)
def split(d):
    hdr=d[:12]; i=12; secs=[]
    while True:
        b=d[i];i+=1
        if b==0: break
        sid=b&0x7f; al=1
        L,i=rv(d,i)
        if b&0x80:
            al,i=rv(d,i)
            while i%al: i+=1
        secs.append((sid,al,bytes(d[i:i+L]))); i+=L
    return hdr,secs
def join(hdr,secs):
    o=bytearray(hdr)
    for sid,al,p in secs:
        o.append(sid|(0x80 if al>1 else 0)); o+=ev(len(p))
        if al>1:
            o+=ev(al)
            while len(o)%al: o.append(0xcb)
        o+=p
    o.append(0); return bytes(o)

def split_debug(p):
    i=0; n,i=rv(p,i)
    while i%4: i+=1
    offs=[struct.unpack('<I',p[i+4*k:i+4*k+4])[0] for k in range(n)]; i+=4*n
    m,i=rv(p,i)
    while i%8: i+=1
    idx=[struct.unpack('<Q',p[i+8*k:i+8*k+8])[0] for k in range(m)]; i+=8*m
    a,i=rv(p,i)
    while i%4: i+=1
    ao=[struct.unpack('<I',p[i+4*k:i+4*k+4])[0] for k in range(a)]; i+=4*a
    data=p[i:]
    attrs=[data[ao[k]:(ao[k+1] if k+1<a else len(data))] for k in range(a)]
    return offs, idx, attrs
def join_debug(offs, idx, attrs):
    o=bytearray(ev(len(offs)))
    while len(o)%4: o.append(0xcb)
    for x in offs: o+=struct.pack('<I',x)
    o+=ev(len(idx))
    while len(o)%8: o.append(0xcb)
    for x in idx: o+=struct.pack('<Q',x)
    o+=ev(len(attrs))
    while len(o)%4: o.append(0xcb)
    off=0
    for a in attrs: o+=struct.pack('<I',off); off+=len(a)
    for a in attrs: o+=a
    return bytes(o)
def skip_tagged(p,i):
    # minimal tagged attr skipper for hints dictionaries
    tag,i=rv(p,i)
    if tag in (10,11):
        n,i=rv(p,i)
        for _ in range(n):
            _,i=rv(p,i); i=skip_tagged(p,i)
        return i
    if tag==1: _,i=rv(p,i); _,i=rv(p,i); return i
    if tag==3: return i+1
    raise Exception('tag %d'%tag)
def convert(d, declaration=False):
    hdr,secs=split(d); hdr=bytearray(hdr); hdr[9]=5
    secs=[list(s) for s in secs]
    f=secs[0][2]; i=0
    n,i=rv(f,i); out=bytearray(f[:i])
    for _ in range(n):
        st=i
        _,i=rv(f,i); _,i=rv(f,i); fl=f[i]; i+=1; _,i=rv(f,i)
        head=bytearray(f[st:i]); head[-1-len(ev(rv(f,i-1)[0]))+1-1]  # noop
        # rebuild: name,sig,flags,loc
        j=st; a,j=rv(f,j); b,j=rv(f,j); j+=1; c,j=rv(f,j)
        out+=ev(a)+ev(b)+bytes([0x02])+ev(c)
        if fl&4:
            k=skip_tagged(f,i); out+=f[i:k]; i=k
        else:
            out+=b'\x0b\x00'
        out+=b'\x0a\x00'
        L,k=rv(f,i); out+=f[i:k+L]; i=k+L
    secs[0][2]=bytes(out)
    for s in secs:
        if s[0]==3:
            offs,idx,attrs=split_debug(s[2])
            attrs=[a+(b'\x01' if declaration else b'\x00') if a and a[0]==5 else a for a in attrs]
            s[2]=join_debug(offs,idx,attrs)
    return join(bytes(hdr),[tuple(s) for s in secs])
if __name__=='__main__':
    # Compares NVIDIA's tileirdisasm with ours on every converted corpus file.
    repo=os.path.abspath(os.path.join(os.path.dirname(__file__),'..','..','..','..'))
    T=os.path.join(repo,'.tools','cuda','bin','tileirdisasm'); O=os.path.join(repo,'target','release','tileirdisasm')
    corpus=os.path.join(repo,'..','shared','corpus')
    ok=bad=0
    with tempfile.TemporaryDirectory() as tmp:
        c=os.path.join(tmp,'c.bin')
        for F in sorted(glob.glob(os.path.join(corpus,'*','*.v13_4.tileir'))):
            d=convert(open(F,'rb').read(), declaration=('decl' in sys.argv))
            open(c,'wb').write(d)
            for g in ([],['-g']):
                a=subprocess.run([T]+g+[c],capture_output=True); b=subprocess.run([O]+g+[c],capture_output=True)
                if a.returncode==0 and a.stdout==b.stdout and a.stderr==b.stderr: ok+=1
                else:
                    bad+=1
                    if bad<3: print(F,g,a.returncode,a.stderr.decode()[:200],'\n ours:',b.returncode,b.stderr.decode()[:200])
    print('ok',ok,'bad',bad)
