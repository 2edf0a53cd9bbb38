# Writes the cases of Kingfisher's rules (examples and negative_examples)
# as JSON lines: python3 extract.py RULES_DIR | gzip -n > ../testdata/kingfisher.jsonl.gz
# README.md says where RULES_DIR comes from.
import json, os, re, sys
import yaml

FLAG = re.compile(r'\(\?([imsxU]+)\)')
BITS = {'i': re.I, 'm': re.M, 's': re.S, 'x': re.X}

def compile_rule(p):
    # Rust's regex takes inline flags anywhere; Python only at the start,
    # so they are lifted to the whole pattern (enough to find where an
    # example's secret is).
    flags = 0
    for m in FLAG.finditer(p):
        for c in m.group(1):
            flags |= BITS.get(c, 0)
    p = re.sub(r'\(\?<(?=[A-Za-z_])', '(?P<', FLAG.sub('', p)).replace('\\z', '\\Z')
    p = p.replace('[[:alnum:]]', '[A-Za-z0-9]').replace('[:alnum:]', 'A-Za-z0-9').replace('[:xdigit:]', '0-9a-fA-F').replace('[:alpha:]', 'A-Za-z').replace('[:digit:]', '0-9')
    return re.compile(p, flags)

# Kingfisher reports a match's first group. Where a rule captures the
# user, account or host before the secret, the secret is this group
# (read from the rule's pattern and its comments).
SECRET_GROUP = {
    'kingfisher.azure.1': 2, 'kingfisher.azure.2': 3, 'kingfisher.blynk.8': 2,
    'kingfisher.blynk.9': 2, 'kingfisher.credentials.1': 2, 'kingfisher.discord.1': 2,
    'kingfisher.google.6': 3, 'kingfisher.gradle.1': 2, 'kingfisher.netrc.1': 3,
    'kingfisher.odbc.1': 2, 'kingfisher.psexec.1': 2,
}

# A URL with a user and password in it: the password is the secret.
URL_PASSWORD = re.compile(r'://[^:/@\s]+:(\S+)@[-.%\w]+')

def secrets(rx, rule, text):
    out = []
    for m in rx.finditer(text):
        v = None
        if rx.groups:
            k = SECRET_GROUP.get(rule)
            v = m.group(k) if k else next((x for x in m.groups() if x), None)
        u = URL_PASSWORD.search(m.group(0))
        if u:
            v = u.group(1)
        v = v or m.group(0)
        if v and v not in out:
            out.append(v)
    return out

def main(root):
    n = bad = 0
    for name in sorted(os.listdir(root)):
        if not name.endswith(('.yml', '.yaml')):
            continue
        with open(os.path.join(root, name)) as f:
            doc = yaml.safe_load(f)
        for r in (doc or {}).get('rules') or []:
            try:
                rx = compile_rule(r['pattern'])
            except Exception as e:
                print(f"{r['id']}: {e}", file=sys.stderr)
                rx = None
            for kind, key in (('tp', 'examples'), ('fp', 'negative_examples')):
                for i, text in enumerate(r.get(key) or []):
                    text = text.rstrip('\n')
                    v = secrets(rx, r['id'], text) if rx and kind == 'tp' else []
                    if kind == 'tp' and not v:
                        bad += 1
                    n += 1
                    print(json.dumps({'rule': r['id'], 'kind': kind, 'visible': r.get('visible', True), 'name': f'{key}[{i}]', 'text': text, 'secrets': v}, ensure_ascii=False))
    print(f'{n} cases; {bad} true positives whose secret the rule does not find', file=sys.stderr)

main(sys.argv[1])
