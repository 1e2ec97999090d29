"""The model's dataclass configs, one per component (sections of :class:`LoGConfig`).

Every field carries a comment. The JSON round trip, type checks and overrides come from
:class:`~logrerank.jsonconfig.JsonConfig`: ``LoGConfig.from_dict`` rejects unknown fields with a
clear message instead of silently ignoring them, so a typo in a checkpoint's ``config.json`` or a
config file is an error, not a different model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .jsonconfig import ConfigError, JsonConfig

ROLE_NAMES: tuple[str, str, str] = ("background", "method", "result")
"""The three functional roles of the paper (background, method, result), in head order."""
UNITS: tuple[str, str] = ("sentence", "passage")
"""Values of ``LocalConfig.unit``: LoG's sentence nodes, or the cross-encoder twin's passage
units (:mod:`logrerank.local.units`)."""


@dataclass
class BackboneConfig(JsonConfig):
    name_or_path: str | None = None  # HF encoder folder or id; None = packaged all-MiniLM-L6-v2
    max_length: int = 512  # tokens per joint window [CLS] q [SEP] s1 [SEP] ... (<= model limit)
    max_query_tokens: int = 64  # query tokens kept per window; longer queries are cut + warned


@dataclass
class LocalConfig(JsonConfig):
    head_hidden: int = 256  # hidden width of the intent, role and local MLPs
    role_proj_dim: int = 32  # output width of W_p, the intent-role interaction feature g (eq. 4)
    dropout: float = 0.1  # dropout inside the MLP heads
    # Adaptation (not in the paper): also feed h_q * h_s and cos(h_q, h_s) to MLP_local (eq. 5),
    # an inductive bias for the small training sets we have. False = the paper's [h_q; h_s; g].
    interaction_features: bool = True
    # Adaptation (not in the paper): the lowest ``isolated_layers`` encoder layers see the query
    # and each sentence as separate ``[CLS] x [SEP]`` segments (positions restart at 0), so the
    # packaged sentence-embedding geometry survives. The remaining layers then run twice: frozen
    # with the same isolation, giving the packaged bi-encoder embeddings whose cosine enters
    # l_local as a prior, and as a trainable copy in which the query and all sentences of the
    # window attend to each other (the joint encoding of eq. 1). 0 = the paper's fully joint
    # encoding with no prior.
    isolated_layers: int = 0
    prior_scale: float = 10.0  # initial a in the prior a * (cos(e_q, e_s) - b) added to l_local
    prior_shift: float = 0.4  # b in that prior (fixed; sets where z_local crosses 0.5)
    # padded tokens per forward pass (bounds peak memory; bench/README.md, "Decisions")
    batch_tokens: int = 4096
    max_batch_windows: int = 32  # windows per forward pass at most
    # inference: pad each batch's length up to a multiple of this (0 = no padding). Fewer
    # distinct batch shapes keep oneDNN's per-shape state from growing with every new input
    # (bench/README.md, "Decisions")
    pad_multiple: int = 0
    # inference and training, isolated mode: the frozen layers run on the sentence segments
    # packed into rows of this many tokens instead of on the windows, so their block-diagonal
    # attention costs ``pack_length`` per token, not the window length (0 = window layout).
    # The same math up to float rounding (bench/README.md, "Decisions")
    pack_length: int = 128
    # Nodes of the local stage: "sentence" = LoG's sentences; "passage" = the cross-encoder twin
    # baseline (docs/evaluation.md): each passage becomes units "title. window of its full text"
    # (logrerank/local/units.py), scored by the same layers, a passage by its best unit
    unit: str = "sentence"
    # "passage" units: tokens per unit (title + ". " + window) at most; 128 = what the packaged
    # bi-encoder ranks best (docs/method.md; docs/studies.md)
    unit_tokens: int = 128
    unit_stride: int = 32  # "passage" units: body tokens shared by consecutive windows


@dataclass
class GraphConfig(JsonConfig):
    tau_sim: float = 0.75  # cosine threshold for cross-passage similarity edges (eq. 10)
    delta: float = 0.25  # max |z_u - z_v| of local scores for a similarity edge (eq. 10)
    top_k: int = 8  # similar neighbours kept per node (TopK_k in eq. 10)
    cross_passage: bool = True  # ablation switch: False = no cross-passage similarity edges
    typed: bool = True  # ablation switch: False = every edge gets one relation type
    block_size: int = 1024  # rows of the similarity matrix computed at once (bounds memory)
    # Link relations (logrerank/graph/links.py; an adaptation, not in the paper). Off by default, so a
    # config without them builds exactly the paper's 8-relation graph.
    mentions: bool = False  # mention / mentioned-by edges: a sentence names another passage's title
    mention_target: str = "all"  # "all" sentences of the mentioned passage, or its "first" one
    mention_max: int = 8  # passages one sentence may mention at most (longest names first)
    shared_terms: bool = False  # shared-term edges: sentences of different passages, rare term
    term_idf: float = 1.5  # a term is rare when ln(P / df) >= this (df >= 2 passages)
    # ... and rare in science: background idf ln(N / df_bg) >= this (logrerank/text/background_df.py;
    # 0 = no background criterion: pool rarity only)
    term_bg_idf: float = 4.0
    term_top_k: int = 4  # shared-term partners kept per sentence (by summed idf of shared terms)
    term_min_len: int = 3  # content terms have at least this many characters


@dataclass
class GlobalConfig(JsonConfig):
    hidden: int = 256  # d_g, node embedding width (eq. 7)
    heads: int = 4  # attention heads per relation-aware GAT layer (eqs. 11-13)
    layers: int = 2  # number of GraphLayers (eq. 14)
    rel_emb_dim: int = 32  # width of the learnable relation embedding e_t (eq. 11)
    dropout: float = 0.1  # dropout on attention weights and inside GraphLayers
    negative_slope: float = 0.2  # LeakyReLU slope in eq. 11
    ffn_mult: int = 2  # feed-forward width = ffn_mult * hidden
    # Adaptation (not in the paper): l_global = l_local + MLP_global(x^L), with the last layer of
    # MLP_global initialised to zero, so an untrained graph starts as the local ranking and the
    # graph learns a correction. False = the paper's eq. 15 exactly.
    residual_local_logit: bool = True
    # Ablation/adaptation: False drops phi_h(h) from eq. 7, so nodes carry only their local score
    # and role (the graph then learns from scores, roles and relations, not from the text vector).
    use_h: bool = True
    # Relation types the GAT has weights for: 8 = the paper's (adjacency + similarity), 11 = also
    # the link relations (mentions, mentioned-by, shared-term; needed by graph.mentions /
    # graph.shared_terms).
    relations: int = 8
    # Adaptation of eq. 7 (logrerank/text/lexical.py): x0 also gets phi_lex of the node's lexical
    # evidence (sentence BM25, passage BM25, query-title match). False = eq. 7 as in the paper.
    lexical_inputs: bool = False
    # the global logit also gets a zero-initialised linear term w . lex, so the model can weight
    # the lexical evidence directly, as the evidence-graph selector does
    lexical_residual: bool = False
    # eq. 15's MLP reads [x_v ; max over v's passage of x], so a signal that reached any sentence
    # of a passage can lift its best sentence (passage metrics rank a passage by its best one)
    passage_pool: bool = False
    # a learned per-pool gate g in (0, 1) on the graph's correction: l_global = l_local + g x
    # (MLP correction + w . lex), g = sigmoid(w_g . f + b_g) over the pool features f of
    # logrerank/graph/pool_features.py (titles, citation marker, graph statistics)
    pool_gate: bool = False


@dataclass
class ContextConfig(JsonConfig):
    top_k: int = 10  # K, selected sentence units (eq. 17)
    in_passage: int = 2  # in-passage neighbours per unit (previous and next sentence)
    cross_passage: int = 2  # most similar cross-passage neighbours per unit
    # Budget (adaptation, not in the paper; defaults = off, the paper's units unchanged):
    max_tokens: int = 0  # token budget of the prompt text (0 = no budget)
    # relative relevance threshold: units and neighbours scoring below min_score x the best
    # unit's score are left out (relative, so that a pool with low scores keeps its units)
    min_score: float = 0.0
    dedupe: bool = False  # each sentence once: no neighbour that is a unit or was already shown


@dataclass
class ScoreConfig(JsonConfig):
    # Adaptations (not in the paper), applied to the final logits after the graph stage (see
    # logrerank/ranking/scoring.py). Defaults = the paper: each sentence keeps its own score.
    merge_duplicates: bool = False  # one score per distinct sentence text in a pool (their mean)
    passage_weight: float = 0.0  # beta in l'_ij = l_ij + beta * mean_k l_ik (passage context)
    # w in l' = l - (1 - w) * (l_local - prior): shrinks what training added to the local logit
    # toward the packaged bi-encoder prior (an output-space ensemble of the fine-tuned and the
    # zero-shot model, as WiSE-FT); 1 = off. Isolated mode only (it has the prior).
    head_weight: float = 1.0
    # w in l' = l + w * passage_bm25 (BM25 of the passage, min-max over the pool;
    # logrerank/text/lexical.py), added last to every pool's final logits: a lexical prior for a
    # model whose scores read no lexical evidence (the cross-encoder twin). Chosen by
    # `logrerank tune-score --lexical`; 0 = off
    lexical_weight: float = 0.0
    # Score calibration (display only; not in the paper): the reported sentence score is
    # sigmoid(a * f + b) of the final logit f, and a learned passage score likewise, so that the
    # shown scores read as probabilities. Monotone (a > 0): the ranking order never changes; the
    # local and global score columns stay sigmoid(l_local) and sigmoid(l_global).
    calibration_a: float = 1.0  # a, the slope (> 0); 1 with b = 0 = no calibration
    calibration_b: float = 0.0  # b, the offset
    # Sentence selection (logrerank/ranking/selection.py; not in the paper): the head of the sentence
    # order is picked greedily with gain z * select_decay ** e - select_margin * e -
    # select_redundancy * (largest cosine of its vector to a picked one), e = sentences of its
    # passage already picked beyond its first select_free + 1; the first select_keep positions
    # stay in score order, positions up to select_depth are picked, the rest follow by score.
    # select_decay 1.0, select_margin 0.0 and select_redundancy 0.0 = the plain score order.
    # Defaults chosen on training splits (docs/evaluation.md, "Sentence selection"): they keep
    # sentence nDCG@10 there but lose it on SciFact dev and HotpotQA's held-out half, so the
    # structured context takes the selected order and the sentence ranking stays in score order
    # unless select_ranking is set.
    select_decay: float = 1.0
    select_margin: float = 0.3
    select_redundancy: float = 0.0
    select_depth: int = 7  # positions chosen greedily; the rest follow in score order
    select_free: int = 1  # further sentences of a passage picked before it pays the margin
    select_keep: int = 3  # first positions kept in score order
    select_ranking: bool = False  # the sentence ranking, not only the context, takes the order


@dataclass
class PassageConfig(JsonConfig):
    # Adaptation (not in the paper; logrerank/ranking/passage_head.py): passages ranked by a learned
    # aggregation of their sentences' evidence, s_p = max_j f_j + MLP(x_p), instead of by their
    # best sentence. 0 = no head: a passage is ranked by its best sentence (the paper)
    hidden: int = 0  # MLP width
    proj_dim: int = 16  # width of the projected evidence-pooled sentence vector W_v v_p
    dropout: float = 0.1  # dropout inside the MLP (training only)


@dataclass
class LoGConfig(JsonConfig):
    backbone: BackboneConfig = field(default_factory=BackboneConfig)  # transformer encoder
    local: LocalConfig = field(default_factory=LocalConfig)  # local scorer heads (eqs. 1-6)
    graph: GraphConfig = field(default_factory=GraphConfig)  # sentence graph (eqs. 8-10)
    global_: GlobalConfig = field(default_factory=GlobalConfig)  # graph reranker (eqs. 7, 11-16)
    context: ContextConfig = field(default_factory=ContextConfig)  # structured context (17-18)
    score: ScoreConfig = field(default_factory=ScoreConfig)  # final score adjustments
    passage: PassageConfig = field(default_factory=PassageConfig)  # learned passage score
    use_global: bool = True  # ablation switch: False = rank by local scores only (no graph)
    device: str = "auto"  # "auto" (cuda if present), "cpu", "cuda", "cuda:1", ...
    precision: str = "auto"  # "auto" (bf16 autocast where supported), "bf16" or "fp32"
    # inference runtime of the local stage's transformer layers: "torch", or ONNX Runtime on CPU
    # ("onnx" float32, "onnx-int8" int8 weights; logrerank/runtime/, bench/README.md)
    runtime: str = "torch"
    trained: bool = False  # set by training; an untrained model is labelled as such everywhere

    SECTIONS = {
        "backbone": BackboneConfig,
        "local": LocalConfig,
        "graph": GraphConfig,
        "global_": GlobalConfig,
        "context": ContextConfig,
        "score": ScoreConfig,
        "passage": PassageConfig,
    }
    ALIASES = {"global": "global_"}  # written as "global" in JSON

    def check(self) -> LoGConfig:
        """Check cross-field constraints; returns self.

        Raises:
            ConfigError: a value is out of range (the message names the field).
        """
        b = self.backbone
        if b.max_query_tokens < 1 or b.max_length - b.max_query_tokens - 2 < 16:
            raise ConfigError(
                "backbone.max_query_tokens must be >= 1 and leave at least 16 tokens of "
                f"backbone.max_length ({b.max_length}) for sentences"
            )
        if self.graph.delta < 0.0 or not -1.0 <= self.graph.tau_sim <= 1.0:
            raise ConfigError("graph.delta must be >= 0 and graph.tau_sim in [-1, 1]")
        if self.graph.top_k < 0 or self.graph.block_size < 1:
            raise ConfigError("graph.top_k must be >= 0 and graph.block_size >= 1")
        g = self.graph
        if g.mention_target not in ("all", "first"):
            raise ConfigError(
                f"graph.mention_target must be 'all' or 'first', got {g.mention_target!r}"
            )
        if self.global_.relations not in (8, 11):
            raise ConfigError("global.relations must be 8 (paper) or 11 (with link relations)")
        if (g.mentions or g.shared_terms) and self.global_.relations < 11:
            raise ConfigError("graph.mentions / graph.shared_terms need global.relations = 11")
        if self.global_.hidden % self.global_.heads:
            raise ConfigError("global.hidden must be divisible by global.heads")
        if (
            self.context.top_k < 0
            or self.local.batch_tokens < 1
            or self.local.pad_multiple < 0
            or self.local.pack_length < 0
            or self.local.max_batch_windows < 1
        ):
            raise ConfigError(
                "context.top_k, local.batch_tokens, local.pad_multiple, local.pack_length or "
                "local.max_batch_windows out of range"
            )
        if self.context.max_tokens < 0 or not 0.0 <= self.context.min_score <= 1.0:
            raise ConfigError("context.max_tokens must be >= 0 and context.min_score in [0, 1]")
        if not 0.0 <= self.score.passage_weight <= 10.0:
            raise ConfigError(
                f"score.passage_weight must be in [0, 10], got {self.score.passage_weight}"
            )
        if not self.score.lexical_weight >= 0.0:
            raise ConfigError(f"score.lexical_weight must be >= 0, got {self.score.lexical_weight}")
        if not 0.0 <= self.score.head_weight <= 1.0:
            raise ConfigError(f"score.head_weight must be in [0, 1], got {self.score.head_weight}")
        sc = self.score
        if not (math.isfinite(sc.calibration_a) and sc.calibration_a > 0.0):
            raise ConfigError(
                f"score.calibration_a must be > 0 (a monotone calibration), got {sc.calibration_a}"
            )
        if not math.isfinite(sc.calibration_b):
            raise ConfigError(f"score.calibration_b must be finite, got {sc.calibration_b}")
        if not (0.0 < sc.select_decay <= 1.0 and sc.select_redundancy >= 0.0):
            raise ConfigError("score.select_decay must be in (0, 1], select_redundancy >= 0")
        if sc.select_margin < 0.0:
            raise ConfigError("score.select_margin must be >= 0")
        if min(sc.select_depth, sc.select_free, sc.select_keep) < 0:
            raise ConfigError(
                "score.select_depth, score.select_free and score.select_keep must be >= 0"
            )
        if self.local.isolated_layers < 0:
            raise ConfigError("local.isolated_layers must be >= 0")
        pc = self.passage
        if pc.hidden < 0 or pc.proj_dim < 1 or not 0.0 <= pc.dropout < 1.0:
            raise ConfigError("passage.hidden must be >= 0, proj_dim >= 1 and dropout in [0, 1)")
        self._check_units()
        if self.precision not in ("auto", "bf16", "fp32"):
            raise ConfigError(f"precision must be 'auto', 'bf16' or 'fp32', got {self.precision!r}")
        if self.runtime not in ("torch", "onnx", "onnx-int8"):
            raise ConfigError(
                f"runtime must be 'torch', 'onnx' or 'onnx-int8', got {self.runtime!r}"
            )
        return self

    def _check_units(self) -> None:
        """``local.unit`` known; passage units fit a window beside the query, with a body."""
        loc, b = self.local, self.backbone
        if loc.unit not in UNITS:
            raise ConfigError(f"local.unit must be one of {UNITS}, got {loc.unit!r}")
        room = b.max_length - b.max_query_tokens - 4  # [CLS] q [SEP] + the unit's [CLS] [SEP]
        if loc.unit == "passage" and not (32 <= loc.unit_tokens <= room):
            raise ConfigError(
                f"local.unit_tokens must be in [32, {room}] (backbone.max_length minus the "
                f"query and special tokens), got {loc.unit_tokens}"
            )
        if loc.unit == "passage" and not 0 <= loc.unit_stride < loc.unit_tokens:
            raise ConfigError(
                f"local.unit_stride must be in [0, unit_tokens), got {loc.unit_stride}"
            )
