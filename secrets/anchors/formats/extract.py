import os, re, sys, json
import re._parser as sp
import re._constants as C
root=sys.argv[1] if len(sys.argv) > 1 else 'th/pkg/detectors'
lit=re.compile(r'`([^`]*)`|"((?:[^"\\]|\\.)*)"')
def gofix(p):
    p=p.replace('[[:alnum:]]','[A-Za-z0-9]').replace('[:alnum:]','A-Za-z0-9').replace('[:alpha:]','A-Za-z').replace('[:digit:]','0-9').replace('[:xdigit:]','0-9a-fA-F').replace('[:upper:]','A-Z').replace('[:lower:]','a-z').replace('[:punct:]','!-/:-@\\[-`{-~')
    p=re.sub(r'\(\?[imsU]+\)','',p)
    p=p.replace('\\z','\\Z')
    return p
ALL=set(chr(c) for c in range(32,127))
def chars(tree):
    s=set()
    items=list(tree)
    for k,(op,av) in enumerate(items):
        # An unescaped dot beside a literal part (.atlasv1.) is written
        # for a dot: it is read as one, not as any byte.
        if op==C.ANY and any(0<=x<len(items) and items[x][0]==C.LITERAL for x in (k-1,k+1)):
            s.add('.'); continue
        if op==C.LITERAL: s.add(chr(av))
        elif op==C.NOT_LITERAL: s|=ALL-{chr(av)}
        elif op==C.IN:
            neg=False; t=set()
            for o,a in av:
                if o==C.NEGATE: neg=True
                elif o==C.LITERAL: t.add(chr(a))
                elif o==C.RANGE: t|=set(chr(c) for c in range(a[0],a[1]+1) if 32<=c<127)
                elif o==C.CATEGORY: t|=cat(a)
                else: raise ValueError(o)
            s|= (ALL-t) if neg else t
        elif op==C.ANY: s|=ALL
        elif op in (C.MAX_REPEAT,C.MIN_REPEAT,C.POSSESSIVE_REPEAT): s|=chars(av[2])
        elif op==C.SUBPATTERN: s|=chars(av[3])
        elif op==C.BRANCH:
            for b in av[1]: s|=chars(b)
        elif op==C.CATEGORY: s|=cat(av)
        elif op in (C.AT,): pass
        else: raise ValueError(op)
    return s
def cat(a):
    d=set('0123456789'); w=set('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'); sp_=set(' \t\n\r\f\v')
    m={C.CATEGORY_DIGIT:d,C.CATEGORY_NOT_DIGIT:ALL-d,C.CATEGORY_WORD:w,C.CATEGORY_NOT_WORD:ALL-w,C.CATEGORY_SPACE:sp_,C.CATEGORY_NOT_SPACE:ALL-sp_}
    return m[a]
def groups(tree,out):
    for op,av in tree:
        if op==C.SUBPATTERN:
            if av[0] is not None:
                sub=sp.SubPattern(tree.state,av[3]) if hasattr(tree,'state') else None
                lo,hi=av[3].getwidth()
                out.append((chars(av[3]),lo,hi))
            else: groups(av[3],out)
        elif op in (C.MAX_REPEAT,C.MIN_REPEAT,C.POSSESSIVE_REPEAT): groups(av[2],out)
        elif op==C.BRANCH:
            for b in av[1]: groups(b,out)
res={}
bad=[]
for det in sorted(os.listdir(root)):
    d=os.path.join(root,det)
    if not os.path.isdir(d): continue
    pats=[];kws=[]
    for dp,_,fs in os.walk(d):
        for f in fs:
            if not f.endswith('.go') or f.endswith('_test.go'): continue
            src=open(os.path.join(dp,f)).read()
            for m in re.finditer(r'MustCompile\((.*)\)\s*$',src,re.M):
                body=m.group(1)
                body=re.sub(r'PrefixRegex\(\[\]string\{[^}]*\}\)','',body)
                ls=[a if a else b.encode().decode('unicode_escape') for a,b in lit.findall(body)]
                if ls: pats.append(''.join(ls))
            for m in re.finditer(r'Keywords\(\) \[\]string \{\s*return \[\]string\{([^}]*)\}',src):
                kws+=re.findall(r'"([^"]+)"',m.group(1))
    fmts=[];ok=True
    for p in pats:
        try:
            t=sp.parse(gofix(p))
            g=[]; groups(t,g)
            if not g:
                lo,hi=t.getwidth(); g=[(chars(t),lo,hi)]
            fmts+=g
        except Exception as e:
            ok=False; bad.append((det,p[:80],str(e)[:60]))
    if not pats: ok=False
    res[det]={'kw':kws,'ok':ok,'fmts':[(''.join(sorted(c)),lo,min(hi,100000)) for c,lo,hi in fmts]}
json.dump(res,open('formats.json','w'))
print(len(res), sum(1 for v in res.values() if v['ok']), len(bad))
for b in bad[:30]: print(b)
