"""`toolslm_like.jsonschema`, the old name of `toolslm_like.schemawalk`

Renamed: it shared its name with the `jsonschema` package users import beside it."""
# Written by hand, not exported: nbdev-export only appends to a module another notebook's `default_exp` makes. Imports
# written for the old name keep working (every name it exported then); new code imports `toolslm_like.schemawalk`.
from toolslm_like.schemawalk import (DEFS_KEYS, TYPE_WORDS, check_schema_bounds, resolve_ref, refs_in, def_name,
    refs_into_defs, merged_all_of, SchemaBudget, node_kind, SchemaWalker, describe_schema, sample_value,
    optional_nulls_dropped, check_bounds)
