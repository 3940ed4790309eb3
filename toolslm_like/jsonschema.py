"`toolslm_like.jsonschema`, the old name of `toolslm_like.schemawalk` (it shared its name with the `jsonschema` package)"
# Written by hand, not exported: nbdev-export only appends to a module another notebook's `default_exp` makes. Imports
# written for the old name keep working; new code imports `toolslm_like.schemawalk`.
from toolslm_like.schemawalk import *
from toolslm_like.schemawalk import TYPE_WORDS, __all__
