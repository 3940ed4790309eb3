__version__ = "0.0.1"
# Written by hand, not exported (as `__main__.py`): the names a user calls, each loaded from its module when first used,
# so `import toolslm_like` costs no more than this file. `nbs/index.ipynb` shows them; tests/test_layers.py checks them.

_names = { # name: the module that defines it (everything else stays in its module: `from toolslm_like.x import y`)
    'get_schema': 'funccall', 'mk_ns': 'funccall', 'call_func': 'funccall', 'call_func_async': 'funccall',
    'python': 'interpreter',
    'tool_schemas': 'providers', 'parse_tool_calls': 'providers', 'format_tool_results': 'providers',
    'Toolbox': 'toolbox', 'tool_loop': 'toolloop', 'atool_loop': 'toolloop',
    'Sandbox': 'sandbox', 'ToolIndex': 'indexes',
    'mcp_server': 'mcp', 'serve_mcp': 'mcp', 'connect_mcp': 'mcp', 'mcp_tools': 'mcp',
    'ToolslmError': 'errors', 'ArgumentError': 'errors', 'ToolNotFoundError': 'errors',
}
__all__ = list(_names)

def __getattr__(name:str):
    "A name of `__all__`, imported from its module the first time it is used"
    if (mod := _names.get(name)) is None: raise AttributeError(f"module 'toolslm_like' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f'{__name__}.{mod}'), name)
    globals()[name] = value # the next use is a plain lookup
    return value

def __dir__(): return sorted([*globals(), *__all__])
