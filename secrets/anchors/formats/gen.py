import json,re,collections,sys
r=json.load(open('formats.json'))
by=collections.defaultdict(list)
def norm(k): return re.sub(r'[^a-z0-9]','',k.lower())
for det,v in r.items():
    names={norm(det)}|{norm(k) for k in v['kw']}
    for n in names:
        if len(n)<3: continue
        if not v['ok'] or not v['fmts']: by[n].append(None)
        else: by[n].append(v['fmts'])
stop=set("""api apiorg auth auths cli close column daily flat float front host http https line live master secret server test user sdk sid wit web3 sql uri ldap ldaps jdbc ftp redis amqp eyj jwt circle phrase monday spark box hive guru streak unify duo
accessid accesskey account accountkey accountname database datasource generic privatekey postgres mongodb sqlserver rabbitmq providerx509 protocols networkaddress moderation parsers privacy manifest magnetic checkout defaultendpointsprotocolhttp endpointsuffix storageaccount collect2 humanity tomorrow verifier shortcut polygon courier semaphore harness harvest delighted refiner getemail getemails chatbot instabot surveybot copper deputy enigma envoy raven kraken hunter square coda tiingo
1000 8x8 m3o da2 aio aha lob rev ngc""".split())
lines=[];n=0
for name in sorted(by):
    l=by[name]
    if name in stop or name.isdigit() or any(x is None for x in l): continue
    fs=set()
    for fm in l:
        for c,lo,hi in fm:
            if any(ord(ch)>=128 for ch in c): continue
            a=b=0
            for ch in c:
                o=ord(ch)
                if o<64: a|=1<<o
                else: b|=1<<(o-64)
            fs.add((a,b,lo,min(hi,65535)))
    if not fs: continue
    n+=1
    lines.append('\t"%s": {%s},' % (name, ', '.join('{%#x, %#x, %d, %d}'%f for f in sorted(fs))))
# The table is written in parts, by a name's first letter, so that no
# file is over 500 lines; services.go joins them.
head = """package secrets

// Code generated from the detectors of TruffleHog at commit
// 3ab759fef4bb5935d4fe9ac68b503d05346b8364 (pkg/detectors/*): for each
// service's name or keyword, the formats of its credentials that the
// detectors document — the bytes each is made of and its least and
// greatest length. No detector's code is here, only those facts.
// docs/security.md says how the table was made. DO NOT EDIT.
"""
parts = [("a-e", "servicesAToE", "0123456789abcde"), ("f-o", "servicesFToO", "fghijklmno"), ("p-z", "servicesPToZ", "pqrstuvwxyz")]
out = sys.argv[1] if len(sys.argv) > 1 else '.'
for suffix, var, first in parts:
    part = [l for l in lines if l[2] in first]
    open('%s/services_%s.go' % (out, suffix), 'w').write(head + '\nvar %s = map[string][]serviceFormat{\n%s\n}\n' % (var, '\n'.join(part)))
open(out + '/services.go', 'w').write(head + """
import "maps"

// serviceFormats are the formats of each service's credentials, joined
// from the parts of the table (services_*.go).
var serviceFormats = func() map[string][]serviceFormat {
	m := make(map[string][]serviceFormat, %d)
	for _, part := range []map[string][]serviceFormat{%s} {
		maps.Copy(m, part)
	}
	return m
}()
""" % (n, ', '.join(p[1] for p in parts)))
print(n)
