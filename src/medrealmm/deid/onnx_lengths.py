"""Give an ONNX model's GRUs their sequence lengths, so a padded batch tags each row as alone.

Baidu LAC's exported encoder takes a ``length`` input but wires it nowhere: its bidirectional
GRUs run over every padded step, and the backward direction reads the pads first, so a padded
row's tags would depend on its batch. ONNX's GRU has an optional ``sequence_lens`` input for
exactly this; this module sets it to ``length`` (cast to int32) in the serialized model, with
a few lines of protobuf wire format instead of a dependency on the ``onnx`` package. Each row
then gets the same emissions, to the bit, as when run alone (``tests/deid/test_deid_ner.py``
pins it), and the tagger may batch clauses of different lengths: fewer, fuller model calls.
"""

from __future__ import annotations

from collections.abc import Iterator

_LENGTHS = b"sequence_lengths_int32"
_INT32 = 6  # TensorProto.INT32
_ATTRIBUTE_INT = 2  # AttributeProto.INT
# Field numbers: ModelProto.graph, GraphProto.node, NodeProto.{input, output, name, op_type,
# attribute}, AttributeProto.{name, i, type}.
_GRAPH, _NODE = 7, 1
_INPUT, _OUTPUT, _NAME, _OP_TYPE, _ATTRIBUTE = 1, 2, 3, 4, 5
_ATTR_NAME, _ATTR_I, _ATTR_TYPE = 1, 3, 20
_SEQUENCE_LENS = 4  # GRU inputs: X, W, R, B, sequence_lens, initial_h


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _fields(data: bytes) -> Iterator[tuple[int, bytes, bytes]]:
    """``(field number, whole encoded field, payload)``; the payload is the content of a
    length-delimited field and empty for the other wire types (copied whole)."""
    at = 0
    while at < len(data):
        start = at
        key, at = _read_varint(data, at)
        wire = key & 7
        payload = b""
        if wire == 0:
            _, at = _read_varint(data, at)
        elif wire == 1:
            at += 8
        elif wire == 2:
            size, at = _read_varint(data, at)
            payload, at = data[at : at + size], at + size
        elif wire == 5:
            at += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire} at byte {start}")
        yield key >> 3, data[start:at], payload


def _bytes_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _cast_lengths(source: bytes) -> bytes:
    """A Cast node: the int64 ``source`` input as the int32 tensor GRU expects."""
    to = _bytes_field(_ATTR_NAME, b"to") + _int_field(_ATTR_I, _INT32)
    to += _int_field(_ATTR_TYPE, _ATTRIBUTE_INT)
    return b"".join(
        [
            _bytes_field(_INPUT, source),
            _bytes_field(_OUTPUT, _LENGTHS),
            _bytes_field(_NAME, b"lengths_as_int32"),
            _bytes_field(_OP_TYPE, b"Cast"),
            _bytes_field(_ATTRIBUTE, to),
        ]
    )


def _node(payload: bytes) -> tuple[bytes, int]:
    """The node with ``sequence_lens`` wired when it is a GRU without it, and 1 if so."""
    if not any(n == _OP_TYPE and p == b"GRU" for n, _, p in _fields(payload)):
        return payload, 0
    inputs = [p for n, _, p in _fields(payload) if n == _INPUT]
    if len(inputs) <= _SEQUENCE_LENS or inputs[_SEQUENCE_LENS]:
        return payload, 0
    inputs[_SEQUENCE_LENS] = _LENGTHS
    rest = [whole for n, whole, _ in _fields(payload) if n != _INPUT]
    return b"".join([*(_bytes_field(_INPUT, i) for i in inputs), *rest]), 1


def with_sequence_lengths(model: bytes, lengths_input: str = "length") -> bytes:
    """``model`` (a serialized ONNX ModelProto) with every GRU's ``sequence_lens`` taken from
    the graph input ``lengths_input``. Raises ValueError when the model has no GRU to wire."""
    out: list[bytes] = []
    wired = 0
    for number, whole, payload in _fields(model):
        if number != _GRAPH:
            out.append(whole)
            continue
        nodes = [_bytes_field(_NODE, _cast_lengths(lengths_input.encode()))]
        for inner, inner_whole, inner_payload in _fields(payload):
            if inner == _NODE:
                node, changed = _node(inner_payload)
                wired += changed
                nodes.append(_bytes_field(_NODE, node))
            else:
                nodes.append(inner_whole)
        out.append(_bytes_field(_GRAPH, b"".join(nodes)))
    if not wired:
        raise ValueError("no GRU without sequence lengths in the model")
    return b"".join(out)
