"""MkDocs hooks for the docs site (`mkdocs.yml` names this file): heading ids made as Pandoc (so Quarto) makes them.

nbdev links a name to `page.html#<name, lowercased>` and prose to `#<Pandoc's id of the heading>`, so the site's
heading ids must be Pandoc's: dots and underscores kept (`toolbox.run`, `get_schema`), other punctuation dropped.
`scripts/build_docs.py` uses the same `slugify` to know which anchors a page will have.
"""
import re

def slugify(value:str, separator:str='-')->str:
    "The id Pandoc gives a heading with text `value`"
    s = re.sub(r'[^\w\s.-]', '', value.strip().lower())
    s = re.sub(r'\s+', separator, s)
    return re.sub(r'^[^a-z_]+', '', s) or 'section'

def on_config(config, **kwargs):
    config.mdx_configs.setdefault('toc', {})['slugify'] = slugify
    return config

# Signatures of API entries and the examples' outputs wrap instead of scrolling sideways: each of their lines becomes a
# block of its own whose wrapped part hangs under it, indented past the line's own indent (site.css), so a parameter's
# comment wraps under the parameter on a phone, and a long output line under its start. Example code keeps its lines.
_re_wrapped_block = re.compile(r'(<div class="(?:api-signature|language-text highlight)"[^>]*>\s*(?:<div class="language-\w+ highlight">)?'
                               r'<pre>(?:<span></span>)?<code>)(.*?)(</code></pre>)', re.S)
_re_tag = re.compile(r'<(/?)span\b[^>]*>')

def _leading_spaces(line:str)->int:
    "How many spaces the text of highlighted HTML `line` starts with"
    text = re.sub(r'<[^>]+>', '', line)
    return len(text) - len(text.lstrip(' '))

def wrap_lines(code_html:str, hang:int)->str:
    """Highlighted code (`code_html`, Pygments' spans closed at each line's end) with each line in a `span.wl` whose
    wrapped part is indented `hang` characters past the line's indent; as it is if a span runs across lines"""
    lines = code_html.split('\n')
    if lines and lines[-1] == '': lines.pop()
    depth = 0
    for l in lines:
        for m in _re_tag.finditer(l): depth += -1 if m[1] else 1
        if depth: return code_html
    return ''.join(f'<span class="wl" style="--indent:{_leading_spaces(l) + hang}ch">{l}\n</span>' for l in lines)

def on_page_content(html, **kwargs):
    return _re_wrapped_block.sub(lambda m: m[1] + wrap_lines(m[2], 4 if 'api-signature' in m[1] else 2) + m[3], html)
