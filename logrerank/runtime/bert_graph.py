"""ONNX graphs of the BERT layers LoG and the cross-encoder run, written from the torch weights.

The graphs are built node by node with ``onnx.helper`` from a Hugging Face BERT's modules rather
than traced by ``torch.onnx.export``: the TorchScript exporter is deprecated, the torch.export
one needs onnxscript and ~10 s per model, and both emit the attention mask as per-layer
``Where`` / ``IsNaN`` chains that ONNX Runtime does not fuse. Here every layer is a ``MatMul``
for Q, K and V together, ONNX Runtime's fused ``com.microsoft.MultiHeadAttention``, and
``MatMul`` / ``Add`` / ``LayerNormalization`` / ``Gelu`` in the pattern its graph optimiser
fuses into ``SkipLayerNormalization`` and ``BiasGelu``. Writing one costs well under a second.

Four graphs (all float32, ids int64):

* :func:`frozen_graph`: LoG's frozen packaged layers in isolated mode (the LoG-Reranker paper's
  eq. 1 encoder with the lower layers kept inside each segment; docs/method.md): inputs ``ids``,
  ``pos``, ``seg`` ``[R, N]``, outputs ``x`` after the lowest ``k`` layers and ``P`` after all;
* :func:`joint_graph`: the trainable joint copy of the top layer(s): input ``h`` ``[B, L, d]``
  and ``keep`` ``[B, L]`` (1 = real token), output ``H``;
* :func:`encoder_graph`: a whole ``BertModel`` (LoG without isolated layers): inputs
  :data:`ID_INPUTS` ``[B, S]``, output ``last_hidden_state``;
* :func:`classifier_graph`: a ``BertForSequenceClassification`` (the cross-encoder): inputs
  :data:`ID_INPUTS`, output ``logits``.

Only BERT-type modules (absolute positions, GELU) are supported: :func:`check_bert` says why
another one is not, and the callers then stay on torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

OPSET = 20  # Gelu is a standard op from opset 20
IR_VERSION = 10  # what onnxruntime 1.2x reads
NEG = -1e9  # additive attention bias of a masked pair (exp underflows to exactly 0)
GELU = {"gelu": "none", "gelu_new": "tanh", "gelu_pytorch_tanh": "tanh", "gelu_fast": "tanh"}


class UnsupportedModel(ValueError):
    """The module is not a BERT this graph builder can write."""


def check_bert(config: Any) -> None:
    """Raise :class:`UnsupportedModel` unless ``config`` describes a plain BERT encoder.

    Raises:
        UnsupportedModel: another architecture, relative positions or another activation.
    """
    kind = getattr(config, "model_type", None)
    if kind != "bert":
        raise UnsupportedModel(f"the ONNX runtime supports BERT encoders only, not {kind!r}")
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        raise UnsupportedModel("the ONNX runtime supports absolute position embeddings only")
    if getattr(config, "hidden_act", None) not in GELU:
        raise UnsupportedModel(f"unsupported activation {config.hidden_act!r} for the ONNX runtime")


def graph_settings(config: Any) -> str:
    """The config fields a graph depends on besides its weights (part of the export key)."""
    check_bert(config)
    keys = ("model_type", "num_attention_heads", "hidden_act", "layer_norm_eps")
    return ",".join(f"{k}={getattr(config, k, None)}" for k in keys)


class _Graph:
    """Nodes and initialisers of one graph under construction (unique names per prefix)."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._n = 0

    def name(self, stem: str) -> str:
        self._n += 1
        return f"{stem}_{self._n}"

    def const(self, stem: str, value: Any, dtype: Any = np.float32) -> str:
        from onnx import numpy_helper

        if isinstance(value, torch.Tensor):
            value = value.detach().float().cpu().numpy()
        name = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value, dtype=dtype), name))
        return name

    def op(self, kind: str, inputs: list[str], stem: str | None = None, **attrs: Any) -> str:
        from onnx import helper

        out = self.name(stem or kind.lower())
        domain = attrs.pop("domain", "")
        node = helper.make_node(kind, inputs, [out], name=out, domain=domain, **attrs)
        self.nodes.append(node)  # named as its output (quantisation excludes nodes by name)
        return out

    def linear(self, x: str, lin: nn.Linear, stem: str) -> str:
        w = self.const(f"{stem}.w", lin.weight.detach().float().t())  # x @ W^T as x @ W'
        y = self.op("MatMul", [x, w], f"{stem}.mm")
        return self.op("Add", [y, self.const(f"{stem}.b", lin.bias)], stem)

    def layer_norm(self, x: str, ln: nn.LayerNorm, stem: str) -> str:
        g, b = self.const(f"{stem}.g", ln.weight), self.const(f"{stem}.b", ln.bias)
        return self.op("LayerNormalization", [x, g, b], stem, axis=-1, epsilon=float(ln.eps))

    def model(self, inputs: list[Any], outputs: list[Any], name: str) -> Any:
        from onnx import helper

        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
        return helper.make_model(graph, opset_imports=opsets, ir_version=IR_VERSION)


def _bert_layer(
    g: _Graph, x: str, layer: nn.Module, heads: int, act: str, bias: str = "", kpm: str = ""
) -> str:
    """One ``BertLayer``: self-attention (additive ``bias`` [R, 1, N, N] and/or key padding
    mask ``kpm`` [R, N] int32), residual + LayerNorm, GELU feed-forward, residual + LayerNorm."""
    att = layer.attention
    sa = att.self
    w = torch.cat([sa.query.weight, sa.key.weight, sa.value.weight]).detach().float().t()
    qkv = g.op("MatMul", [x, g.const("qkv.w", w)], "qkv")  # bias goes into the attention op
    b = g.const("qkv.b", torch.cat([sa.query.bias, sa.key.bias, sa.value.bias]))
    d = sa.query.weight.shape[0]
    split = g.const("qkv.split", [d, d, d], np.int64)
    q, k, v = g.name("q"), g.name("k"), g.name("v")
    from onnx import helper

    g.nodes.append(helper.make_node("Split", [qkv, split], [q, k, v], axis=-1))
    ctx = g.op(
        "MultiHeadAttention",
        [q, k, v, b, kpm, bias],
        "mha",
        domain="com.microsoft",
        num_heads=int(heads),
    )
    h = g.op("Add", [g.linear(ctx, att.output.dense, "attn.out"), x], "attn.res")
    h = g.layer_norm(h, att.output.LayerNorm, "attn.ln")
    f = g.op("Gelu", [g.linear(h, layer.intermediate.dense, "ffn.in")], "gelu", approximate=act)
    y = g.op("Add", [g.linear(f, layer.output.dense, "ffn.out"), h], "ffn.res")
    return g.layer_norm(y, layer.output.LayerNorm, "ffn.ln")


def _embeddings(g: _Graph, emb: nn.Module, ids: str, pos: str, types: str | None) -> str:
    """Word + position (+ token type; row 0 when ``types`` is None) embeddings, LayerNorm."""
    e = g.op("Gather", [g.const("word", emb.word_embeddings.weight), ids], "word.e", axis=0)
    p = g.op("Gather", [g.const("pos", emb.position_embeddings.weight), pos], "pos.e", axis=0)
    e = g.op("Add", [e, p], "emb.wp")
    tt = emb.token_type_embeddings.weight
    if types is None:
        e = g.op("Add", [e, g.const("type0", tt[0])], "emb")
    else:
        e = g.op("Add", [e, g.op("Gather", [g.const("type", tt), types], "type.e", axis=0)])
    return g.layer_norm(e, emb.LayerNorm, "emb.ln")


def _int_input(name: str, dims: list[str]) -> Any:
    from onnx import TensorProto, helper

    return helper.make_tensor_value_info(name, TensorProto.INT64, dims)


def _float_io(name: str, dims: list[Any]) -> Any:
    from onnx import TensorProto, helper

    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def _unsqueeze(g: _Graph, x: str, axes: list[int]) -> str:
    return g.op("Unsqueeze", [x, g.const("axes", axes, np.int64)], "unsq")


def _positions(g: _Graph, x: str) -> str:
    """``0 .. N-1`` for the second dimension of ``x`` (a 1-D int64 tensor)."""
    n = g.op("Shape", [x], "n", start=1, end=2)  # [1]
    n = g.op("Squeeze", [n, g.const("axes", [0], np.int64)], "n.s")
    return g.op("Range", [g.const("r0", 0, np.int64), n, g.const("r1", 1, np.int64)], "ar")


def _key_padding(g: _Graph, keep: str) -> str:
    """``[B, L]`` int64 1/0 -> the int32 key padding mask of ``MultiHeadAttention``."""
    from onnx import TensorProto

    return g.op("Cast", [keep], "kpm", to=TensorProto.INT32)


def frozen_graph(encoder: nn.Module, k: int) -> Any:
    """The frozen packaged layers of isolated mode as one graph (``LocalScorer._frozen_layers``).

    Tokens attend only to tokens of the same segment id in their row; padding (seg -1) attends
    to itself only.

    Args:
        encoder: a Hugging Face ``BertModel``.
        k: the lowest ``k`` layers give ``x``; all layers give ``P``.
    """
    cfg = encoder.config
    check_bert(cfg)
    g = _Graph()
    act = GELU[cfg.hidden_act]
    x = _embeddings(g, encoder.embeddings, "ids", "pos", None)
    # block mask [R, 1, N, N]: same segment and real, or the diagonal
    a, b = _unsqueeze(g, "seg", [2]), _unsqueeze(g, "seg", [1])  # [R, N, 1], [R, 1, N]
    same = g.op(
        "And", [g.op("Equal", [a, b]), g.op("GreaterOrEqual", [a, g.const("zero", 0, np.int64)])]
    )
    ar = _positions(g, "seg")
    eye = g.op("Equal", [_unsqueeze(g, ar, [1]), _unsqueeze(g, ar, [0])], "eye")  # [N, N]
    allowed = g.op("Or", [same, eye], "allowed")
    bias = g.op("Where", [allowed, g.const("b0", 0.0), g.const("bneg", NEG)], "bias")
    bias = _unsqueeze(g, bias, [1])
    layers = list(encoder.encoder.layer)
    for layer in layers[:k]:
        x = _bert_layer(g, x, layer, cfg.num_attention_heads, act, bias=bias)
    P = x
    for layer in layers[k:]:
        P = _bert_layer(g, P, layer, cfg.num_attention_heads, act, bias=bias)
    g.nodes.append(_identity(x, "x"))
    g.nodes.append(_identity(P, "P"))
    d = cfg.hidden_size
    ins = [_int_input(n, ["rows", "tokens"]) for n in ("ids", "pos", "seg")]
    outs = [_float_io("x", ["rows", "tokens", d]), _float_io("P", ["rows", "tokens", d])]
    return g.model(ins, outs, "logrerank_frozen")


def joint_graph(layers: nn.ModuleList, config: Any) -> Any:
    """The joint top layer(s) of isolated mode: every token attends to the real tokens of its
    window (``LocalScorer._encode_isolated``)."""
    check_bert(config)
    g = _Graph()
    kpm = _key_padding(g, "keep")
    h = "h"
    for layer in layers:
        h = _bert_layer(g, h, layer, config.num_attention_heads, GELU[config.hidden_act], kpm=kpm)
    g.nodes.append(_identity(h, "H"))
    d = config.hidden_size
    ins = [_float_io("h", ["batch", "tokens", d]), _int_input("keep", ["batch", "tokens"])]
    return g.model(ins, [_float_io("H", ["batch", "tokens", d])], "logrerank_joint")


def _encoder_body(g: _Graph, bert: nn.Module) -> str:
    """Embeddings and every layer of a ``BertModel`` over the four ``[B, S]`` id inputs
    (``attention_mask`` 1 = real token; keys of padding are masked)."""
    cfg = bert.config
    x = _embeddings(g, bert.embeddings, "input_ids", "position_ids", "token_type_ids")
    kpm = _key_padding(g, "attention_mask")
    act = GELU[cfg.hidden_act]
    for layer in bert.encoder.layer:
        x = _bert_layer(g, x, layer, cfg.num_attention_heads, act, kpm=kpm)
    return x


ID_INPUTS = ("input_ids", "attention_mask", "token_type_ids", "position_ids")
"""Inputs of :func:`encoder_graph` and :func:`classifier_graph`, each ``[B, S]`` int64."""


def encoder_graph(encoder: nn.Module) -> Any:
    """A ``BertModel`` (LoG's fully joint encoder when ``isolated_layers`` is 0): output
    ``last_hidden_state`` ``[B, S, d]``."""
    check_bert(encoder.config)
    g = _Graph()
    g.nodes.append(_identity(_encoder_body(g, encoder), "last_hidden_state"))
    ins = [_int_input(name, ["batch", "tokens"]) for name in ID_INPUTS]
    d = encoder.config.hidden_size
    outs = [_float_io("last_hidden_state", ["batch", "tokens", d])]
    return g.model(ins, outs, "logrerank_encoder")


def classifier_graph(model: nn.Module) -> Any:
    """A ``BertForSequenceClassification``: the encoder, the pooler (tanh of the first token's
    dense projection) and the classifier; output ``logits`` ``[B, num_labels]``."""
    cfg = model.config
    check_bert(cfg)
    bert = getattr(model, "bert", None)
    if bert is None or getattr(bert, "pooler", None) is None:
        raise UnsupportedModel("the ONNX runtime needs a BertForSequenceClassification")
    g = _Graph()
    x = _encoder_body(g, bert)
    zero, one = g.const("s0", [0], np.int64), g.const("s1", [1], np.int64)
    first = g.op("Slice", [x, zero, one, one], "first")  # [B, 1, d]: the first token
    first = g.op("Squeeze", [first, one], "first.s")  # [B, d]
    pooled = g.op("Tanh", [g.linear(first, bert.pooler.dense, "pooler")], "pooled")
    g.nodes.append(_identity(g.linear(pooled, model.classifier, "classifier"), "logits"))
    ins = [_int_input(name, ["batch", "tokens"]) for name in ID_INPUTS]
    outs = [_float_io("logits", ["batch", cfg.num_labels])]
    return g.model(ins, outs, "logrerank_classifier")


def _identity(src: str, dst: str) -> Any:
    from onnx import helper

    return helper.make_node("Identity", [src], [dst])
