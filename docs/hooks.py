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
