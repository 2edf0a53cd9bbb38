# Writes the negative cases of Semgrep's secret rules' tests (the line
# after each "ok:" annotation) as JSON lines:
# python3 semgrep.py SECRETS_DIR | gzip -n > ../testdata/semgrep-negatives.jsonl.gz
# README.md says where SECRETS_DIR comes from.
import json, os, re, sys

OK = re.compile(r'^\s*(?:#|//|<!--|;|--)\s*ok:\s*([\w.-]+)', re.I)

def main(root):
    n = 0
    for dirpath, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if name.endswith(('.yaml', '.yml')) and not name.endswith('.test.yaml'):
                continue
            path = os.path.join(dirpath, name)
            try:
                lines = open(path, encoding='utf-8').read().split('\n')
            except UnicodeDecodeError:
                continue
            for i, l in enumerate(lines[:-1]):
                m = OK.match(l)
                if not m or not lines[i + 1].strip():
                    continue
                rel = os.path.relpath(path, root)
                print(json.dumps({'rule': m.group(1), 'kind': 'fp', 'visible': True, 'name': f'{rel}:{i + 2}', 'text': lines[i + 1], 'secrets': []}, ensure_ascii=False))
                n += 1
    print(f'{n} negative cases', file=sys.stderr)

main(sys.argv[1])
