"""Give an ONNX model's GRUs their sequence lengths, so a padded batch tags each row as alone.

Baidu LAC's exported encoder takes a ``length`` input but wires it nowhere: its bidirectional
GRUs run over every padded step, and the backward direction reads the pads first, so a padded
row's tags would depend on its batch. ONNX's GRU has an optional ``sequence_lens`` input for
exactly this; this module sets it to ``length`` (cast to int32) with the ``onnx`` package as
the model loads. Each row then gets the same emissions, to the bit, as when run alone
(``tests/deid/test_deid_ner.py`` pins it), and the tagger may batch clauses of different
lengths: fewer, fuller model calls.
"""

from __future__ import annotations

_LENGTHS = "sequence_lengths_int32"
_SEQUENCE_LENS = 4  # GRU inputs: X, W, R, B, sequence_lens, initial_h


def with_sequence_lengths(model: bytes, lengths_input: str = "length") -> bytes:
    """``model`` (a serialized ONNX ModelProto) with every GRU's ``sequence_lens`` taken from
    the graph input ``lengths_input``. Raises ValueError when the model has no GRU to wire."""
    import onnx  # imported here: only loading the NER model needs it
    from onnx import helper

    proto = onnx.load_model_from_string(model)
    wired = 0
    for node in proto.graph.node:
        inputs = node.input
        if node.op_type == "GRU" and len(inputs) > _SEQUENCE_LENS and not inputs[_SEQUENCE_LENS]:
            inputs[_SEQUENCE_LENS] = _LENGTHS
            wired += 1
    if not wired:
        raise ValueError("no GRU without sequence lengths in the model")
    cast = helper.make_node(
        "Cast", [lengths_input], [_LENGTHS], name="lengths_as_int32", to=onnx.TensorProto.INT32
    )
    nodes = [cast, *proto.graph.node]
    del proto.graph.node[:]
    proto.graph.node.extend(nodes)
    return proto.SerializeToString()
