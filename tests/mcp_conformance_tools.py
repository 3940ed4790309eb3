"""The tools the MCP conformance tool's server scenarios call (npm `@modelcontextprotocol/conformance`), for
`toolslm-like serve --http tests/mcp_conformance_tools.py:<names>`; each does what its scenario asks"""
import time
import mcp_types as mt
from toolslm_like.mcp import tool_function

IMAGE = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
AUDIO = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA='

def test_simple_text()->str:
    "Tests simple text content response"
    return 'This is a simple text response for testing.'

def test_image_content():
    "Tests image content response"
    return mt.ImageContent(data=IMAGE, mime_type='image/png')

def test_audio_content():
    "Tests audio content response"
    return mt.AudioContent(data=AUDIO, mime_type='audio/wav')

def _resource(uri, mime, text): return mt.EmbeddedResource(resource=mt.TextResourceContents(uri=uri, mime_type=mime, text=text))

def test_embedded_resource():
    "Tests embedded resource content response"
    return _resource('test://embedded-resource', 'text/plain', 'This is an embedded resource content.')

def test_multiple_content_types():
    "Tests response with multiple content types (text, image, resource)"
    return [mt.TextContent(text='Multiple content types test:'), mt.ImageContent(data=IMAGE, mime_type='image/png'),
            _resource('test://mixed-content-resource', 'application/json', '{"test": "data", "value": 123}')]

def test_error_handling():
    "Tests error response handling"
    raise RuntimeError('This tool intentionally returns an error for testing')

def test_reconnection()->str:
    "Tests that a call's result reaches the client"
    time.sleep(0.1)
    return 'Reconnection test completed successfully.'

JSON_SCHEMA_2020_12 = {
    '$schema': 'https://json-schema.org/draft/2020-12/schema', 'type': 'object',
    '$defs': {'address': {'$anchor': 'addressDef', 'type': 'object',
                          'properties': {'street': {'type': 'string'}, 'city': {'type': 'string'}}}},
    'properties': {'name': {'type': 'string'}, 'address': {'$ref': '#/$defs/address'},
                   'contactMethod': {'type': 'string', 'enum': ['phone', 'email']},
                   'phone': {'type': 'string'}, 'email': {'type': 'string'}},
    'allOf': [{'anyOf': [{'required': ['phone']}, {'required': ['email']}]}],
    'if': {'properties': {'contactMethod': {'const': 'phone'}}, 'required': ['contactMethod']},
    'then': {'required': ['phone']}, 'else': {'required': ['email']},
    'additionalProperties': False}

# a tool served with a schema written by hand: the function `tool_function` makes from it, whose calls go to `greet`
def _greet(name, args): return f"Hello, {args.get('name', 'whoever')}!"
json_schema_2020_12_tool = tool_function({'name': 'json_schema_2020_12_tool', 'inputSchema': JSON_SCHEMA_2020_12,
    'description': 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)'}, _greet)

TOOLS = 'test_simple_text,test_image_content,test_audio_content,test_embedded_resource,test_multiple_content_types,' \
        'test_error_handling,test_reconnection,json_schema_2020_12_tool'

# a parameter mirrored into an HTTP header (SEP-2243): the SDK checks the header against the argument
test_custom_headers = tool_function({'name': 'test_custom_headers', 'description': 'Echo a region sent as a header too',
    'inputSchema': {'type': 'object', 'properties': {'region': {'type': 'string', 'x-mcp-header': 'Region'}},
                    'required': ['region']}}, lambda name, args: f"region {args['region']}")

TOOLS += ',test_custom_headers'

from toolslm_like.funccall import ToolContext

def test_tool_with_logging(ctx:ToolContext)->str:
    "Tests tool that emits log messages during execution"
    for i,text in enumerate(['Tool execution started', 'Tool processing data', 'Tool execution completed']):
        if i: time.sleep(0.05)
        ctx.log('info', text)
    return 'Tool with logging executed successfully'

def test_tool_with_progress(ctx:ToolContext)->str:
    "Tests tool that reports progress notifications"
    for i,done in enumerate([0, 50, 100]):
        if i: time.sleep(0.05)
        ctx.report_progress(done, 100, f"Completed step {done} of 100")
    return 'Tool with progress executed successfully'

TOOLS += ',test_tool_with_logging,test_tool_with_progress'
