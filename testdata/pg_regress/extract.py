# Usage: python3 extract.py <a clone of libpg_query> > selects.json
"""Extracts the SELECT/WITH/VALUES/TABLE statements of PostgreSQL's regression tests (as vendored
by libpg_query under test/sql/postgres_regress), one statement per JSON string."""
import json, re, subprocess, sys
repo = sys.argv[1]
files = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD", "test/sql/postgres_regress"], capture_output=True, text=True).stdout.split()
def split(text):
    out, cur, i, n = [], [], 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == '\\':  # psql meta-command: the rest of the line
            j = text.find('\n', i); j = n if j < 0 else j
            if ''.join(cur).strip() == '': cur = []
            else: cur = ['\x00']  # a meta-command inside a statement: drop the statement
            i = j; continue
        at_line_start = c == '\n'
        if text.startswith('--', i):
            j = text.find('\n', i); j = n if j < 0 else j
            cur.append(text[i:j]); i = j; continue
        if text.startswith('/*', i):
            depth, j = 0, i
            while j < n:
                if text.startswith('/*', j): depth += 1; j += 2
                elif text.startswith('*/', j):
                    depth -= 1; j += 2
                    if depth == 0: break
                else: j += 1
            cur.append(text[i:j]); i = j; continue
        if c == "'" or c == '"':
            j = i + 1
            while j < n:
                if text[j] == c:
                    if j + 1 < n and text[j+1] == c: j += 2; continue
                    break
                if c == "'" and text[j] == '\\' and i > 0 and text[i-1] in 'eE': j += 2; continue
                j += 1
            cur.append(text[i:j+1]); i = j + 1; continue
        if c == '$':
            m = re.match(r'\$([A-Za-z_][A-Za-z_0-9]*)?\$', text[i:])
            if m and (i == 0 or not (text[i-1].isalnum() or text[i-1] == '_')):
                tag = m.group(0); j = text.find(tag, i + len(tag))
                j = n if j < 0 else j + len(tag)
                cur.append(text[i:j]); i = j; continue
        if c == ';':
            out.append(''.join(cur)); cur = []; i += 1; continue
        cur.append(c); i += 1
    return out
def first_word(s):
    s = re.sub(r'^(\s|--[^\n]*\n|/\*.*?\*/|\()*', '', s, flags=re.S)
    m = re.match(r'[A-Za-z]+', s)
    return m.group(0).upper() if m else ''
stmts = []
for f in files:
    if not f.endswith('.sql'): continue
    text = subprocess.run(["git", "-C", repo, "show", "HEAD:" + f], capture_output=True).stdout.decode('utf-8', 'replace')
    for s in split(text):
        s = s.strip()
        if '\x00' in s or not s: continue
        # psql variables (:name, :'name') are substituted by psql, not PostgreSQL
        if re.search(r"(?<![:\w]):['\"]?[A-Za-z_]", re.sub(r"'(?:[^']|'')*'", "''", s)): continue
        if first_word(s) in ('SELECT', 'WITH', 'VALUES', 'TABLE') and len(s) <= 4000:
            stmts.append(s)
json.dump(stmts, sys.stdout, indent=0, ensure_ascii=False)
print(len(stmts), sum(map(len, stmts)), file=sys.stderr)
