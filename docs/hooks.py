"""MkDocs hooks for the docs site (`mkdocs.yml` names this file): heading ids made as Pandoc (so Quarto) makes them.

nbdev links a name to `page.html#<name, lowercased>` and prose to `#<Pandoc's id of the heading>`, so the site's
heading ids must be Pandoc's: dots and underscores kept (`toolbox.run`, `get_schema`), other punctuation dropped.
`scripts/build_docs.py` uses the same `slugify` to know which anchors a page will have. And API signatures and
outputs wrap rather than scroll sideways (`on_page_content`, below).
"""
import html, re

def slugify(value:str, separator:str='-')->str:
    "The id Pandoc gives a heading with text `value`"
    s = re.sub(r'[^\w\s.-]', '', value.strip().lower())
    s = re.sub(r'\s+', separator, s)
    return re.sub(r'^[^a-z_]+', '', s) or 'section'

def on_config(config, **kwargs):
    config.mdx_configs.setdefault('toc', {})['slugify'] = slugify
    return config

# Signatures of API entries and the examples' outputs wrap instead of scrolling sideways: each of their lines becomes a
# block of its own whose wrapped part hangs under it, past the line's own indent (site.css), so a parameter's comment
# wraps under the parameter on a phone, and a long output line under its start. The indent is drawn as padding (its
# spaces hidden: a line whose first word is long then starts with that word, not a blank line); the copy button copies
# the text as it was.
# Example code keeps its lines.
_re_wrapped_block = re.compile(r'(<div class="(?:api-signature|language-text highlight)"[^>]*>\s*(?:<div class="language-\w+ highlight">)?'
                               r'<pre>(?:<span></span>)?<code>)(.*?)(</code></pre>)', re.S)
_re_tag = re.compile(r'<(/?)span\b[^>]*>')
_re_lead = re.compile(r'^(?:<span class="w">( +)</span>|( +))')

def wrap_lines(code_html:str, hang:int)->str:
    """Highlighted code (`code_html`, Pygments' spans closed at each line's end) with each line in a `span.wl` whose
    wrapped part is indented `hang` characters past the line's indent; as it is if a span runs across lines"""
    lines = code_html.split('\n')
    if lines and lines[-1] == '': lines.pop()
    depth = 0
    for l in lines:
        for m in _re_tag.finditer(l): depth += -1 if m[1] else 1
        if depth: return code_html
    def line(l):
        lead = (m := _re_lead.match(l)) and (m[1] or m[2]) or ''
        rest = l[m.end():] if lead else l
        return (f'<span class="wl" style="--lead:{len(lead)}ch;--hang:{hang}ch">'
                f'{f"<span class=lead>{lead}</span>" if lead else ""}{rest}\n</span>')
    return ''.join(map(line, lines))

def _wrapped(m)->str:
    "A block `_re_wrapped_block` matched, its lines wrapped; its text as it was for the copy button (Material copies `data-copy`)"
    lines = wrap_lines(m[2], 4 if 'api-signature' in m[1] else 2)
    if lines == m[2]: return m[0]
    text = html.unescape(re.sub(r'<[^>]+>', '', m[2])).rstrip('\n')
    return m[1][:-len('<code>')] + f'<code data-copy="{html.escape(text, quote=True)}">' + lines + m[3]

def on_page_content(html, **kwargs): return _re_wrapped_block.sub(_wrapped, html)
