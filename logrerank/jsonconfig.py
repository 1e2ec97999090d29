"""The JSON round trip shared by every config dataclass (model, training, role tagger).

:class:`JsonConfig` gives a dataclass ``to_dict`` / ``from_dict`` / ``load`` / ``save`` and
``override(["field=value", ...])``. Loading and overriding type-check every value against its
annotation (:func:`check_field`), refuse unknown fields, and end with the class's own
:meth:`JsonConfig.check` (ranges, enumerated values), so a typo in a config file, a
checkpoint's ``config.json`` or a ``--set`` option is an error naming the field and the value,
not a different run.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

C = TypeVar("C", bound="JsonConfig")


class ConfigError(ValueError):
    """A config (file, dict, override or checkpoint ``config.json``) is malformed."""


_TYPES = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,)}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_field(f: dataclasses.Field, value: Any, name: str) -> Any:
    """Type-check one config value against its (string) annotation.

    Scalars (``int``, ``float``, ``bool``, ``str``), their ``| None`` forms, ``list[str]``,
    ``list[int]``,
    ``dict[str, int]`` and other ``dict[...]`` (an object) are checked; other annotations pass
    through. An ``int`` given for a ``float`` becomes a float. ``name`` is used in the message.

    Raises:
        ConfigError: null for a required field, or a value of the wrong type.
    """
    ann = str(f.type).replace(" ", "")
    optional = ann.endswith("|None")
    base = ann.removesuffix("|None")
    if value is None:
        if optional:
            return None
        raise ConfigError(f"config field {name!r} must not be null")
    if base == "list[str]":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(
                f"config field {name!r} must be a list of strings, got {_shown(value)}"
            )
        return list(value)
    if base == "list[int]":
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise ConfigError(
                f"config field {name!r} must be a list of integers, got {_shown(value)}"
            )
        return list(value)
    if base.startswith("dict["):
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise ConfigError(f"config field {name!r} must be an object, got {_shown(value)}")
        if base == "dict[str,int]" and not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value.values()
        ):
            raise ConfigError(
                f"config field {name!r} must map names to integers, got {_shown(value)}"
            )
        return dict(value)
    allowed = _TYPES.get(base)
    if allowed is None:
        return value
    if isinstance(value, bool) and base != "bool":
        raise ConfigError(f"config field {name!r} must be {base}, got a boolean ({value})")
    if not isinstance(value, allowed):
        raise ConfigError(
            f"config field {name!r} must be {base}, got {type(value).__name__} {_shown(value)}"
        )
    return float(value) if base == "float" else value


def parse_value(raw: str) -> Any:
    """An override's value: JSON (``3``, ``true``, ``null``, ``["a"]``), else the bare string."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw  # a bare string, e.g. a path or an enumerated name


class JsonConfig:
    """Base of the config dataclasses: typed JSON round trip, overrides and checks.

    Class attributes a subclass may set (plain assignments, not dataclass fields):

    * ``LABEL``: what the config is called in messages (``"training config"``).
    * ``KEY_PREFIX``: prefix of field names in type errors (``"role-tagger."``).
    * ``SECTIONS``: field name -> :class:`JsonConfig` subclass of nested sections.
    * ``ALIASES``: JSON key -> field name (``{"global": "global_"}``); ``to_dict`` writes the
      JSON key, ``from_dict`` accepts either (not both).
    * ``PARTIAL``: field name -> :class:`JsonConfig` subclass for ``dict`` fields that hold a
      sparse override of another config (a run config's ``model``): ``from_dict`` checks them
      against it, and a dotted ``--set model.graph.tau_sim=0.8`` reaches inside them.
    """

    LABEL = "config"
    KEY_PREFIX = ""
    SECTIONS: dict[str, type[JsonConfig]] = {}
    ALIASES: dict[str, str] = {}
    PARTIAL: dict[str, type[JsonConfig]] = {}

    def check(self: C) -> C:
        """Check ranges and enumerated values; returns self. Subclasses extend it.

        Raises:
            ConfigError: a value is out of range or not one of the allowed names.
        """
        return self

    def validate(self: C) -> C:
        """The same as :meth:`check` (the name the model constructors call)."""
        return self.check()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (aliased fields under their JSON key, written last)."""
        d = dataclasses.asdict(self)
        for key, name in self.ALIASES.items():
            d[key] = d.pop(name)
        return d

    @classmethod
    def from_dict(cls: type[C], data: Any, section: str | None = None) -> C:
        """Build a config, rejecting unknown fields and wrong types, then :meth:`check` it.

        Args:
            data: the JSON object.
            section: the key this object sits under in a parent config (messages only).

        Raises:
            ConfigError: not an object, an unknown field, a wrong type or a bad value.
        """
        if not isinstance(data, dict):
            if section is not None:
                raise ConfigError(f"config section {section!r} must be an object")
            raise ConfigError(f"{cls.LABEL} must be a JSON object, got {type(data).__name__}")
        data = dict(data)
        for key, name in cls.ALIASES.items():
            if key in data and name in data:
                raise ConfigError(f"{cls.LABEL} has both {key!r} and {name!r}; use {key!r}")
            if key in data:
                data[name] = data.pop(key)
        fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(data) - set(fields))
        if unknown:
            if section is not None:
                raise ConfigError(f"unknown field(s) {unknown} in config section {section!r}")
            named = f"field {unknown[0]!r}" if len(unknown) == 1 else f"fields {unknown}"
            raise ConfigError(f"unknown {cls.LABEL} {named}; known: {sorted(fields)}")
        shown = {name: key for key, name in cls.ALIASES.items()}
        kwargs: dict[str, Any] = {}
        for name, value in data.items():
            key = shown.get(name, name)
            full = f"{section}.{key}" if section is not None else f"{cls.KEY_PREFIX}{key}"
            sub = cls.SECTIONS.get(name)
            if sub is not None:
                kwargs[name] = sub.from_dict(value, full)
            else:
                kwargs[name] = check_field(fields[name], value, full)
                schema = cls.PARTIAL.get(name)
                if schema is not None and kwargs[name]:
                    schema.from_dict(kwargs[name], full)  # a sparse override must be valid
        return cls(**kwargs).check()

    @classmethod
    def load(cls: type[C], path: str | Path) -> C:
        """Read a config file written by :meth:`save` (or by hand).

        Raises:
            ConfigError: unreadable, not JSON, or not a valid config.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read {cls.LABEL} {path}: {exc}") from exc
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        """Write the config as indented JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    def override(self: C, items: Iterable[str]) -> C:
        """Apply ``FIELD=VALUE`` overrides in place and return self.

        ``VALUE`` is parsed as JSON, else taken as a bare string; a section's field is named
        with a dot (``graph.tau_sim=0.6``), and so is a field inside a sparse override
        (``PARTIAL``: ``model.graph.tau_sim=0.8`` sets ``{"model": {"graph": {"tau_sim": 0.8}}}``
        and keeps the override's other entries). Every item is type-checked and the result checked
        (:meth:`check`) before anything changes.

        Raises:
            ConfigError: an item is not ``FIELD=VALUE``, names an unknown field, or gives a
                value of the wrong type or out of range (the message quotes the item).
        """
        data = self.to_dict()
        new = None
        for item in items:
            key, sep, raw = str(item).partition("=")
            key = key.strip()
            if not sep or not key:
                raise ConfigError(f"override {item!r}: expected FIELD=VALUE")
            *path, leaf = key.split(".")
            target, cls = data, type(self)
            for i, part in enumerate(path):
                name = cls.ALIASES.get(part, part)
                sub = cls.SECTIONS.get(name)
                if sub is None and name in cls.PARTIAL and i == 0:
                    _set_partial(data, cls.PARTIAL[name], name, path[1:], leaf, raw, item)
                    break
                if sub is None:
                    raise ConfigError(f"override {item!r}: {part!r} is not a {cls.LABEL} section")
                target = target[{v: k for k, v in cls.ALIASES.items()}.get(name, name)]
                cls = sub
            else:
                shown = {v: k for k, v in cls.ALIASES.items()}
                leaf = shown.get(cls.ALIASES.get(leaf, leaf), leaf)
                if leaf not in target:
                    raise ConfigError(
                        f"override {item!r}: unknown {cls.LABEL} field {leaf!r}"
                        f"{_did_you_mean(leaf, target)}; known: {sorted(target)}"
                    )
                target[leaf] = parse_value(raw)
            try:
                new = type(self).from_dict(data)
            except ConfigError as exc:
                raise ConfigError(f"override {item!r}: {exc}") from exc
        if new is not None:
            for f in dataclasses.fields(self):  # type: ignore[arg-type]
                setattr(self, f.name, getattr(new, f.name))
        return self


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'seeds'?)`` for the closest known names, else ``""``."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def _set_partial(
    data: dict[str, Any],
    schema: type[JsonConfig],
    field: str,
    path: list[str],
    leaf: str,
    raw: str,
    item: str,
) -> None:
    """Set ``field.path.leaf`` inside a sparse override dict of ``data`` (see ``PARTIAL``).

    Every step must name a section (or, last, a field) of ``schema``; JSON keys are used
    (``global``, not ``global_``).

    Raises:
        ConfigError: a step that ``schema`` does not have (named with the known ones).
    """
    cls, node = schema, data.setdefault(field, {})
    for part in path:
        name = cls.ALIASES.get(part, part)
        sub = cls.SECTIONS.get(name)
        if sub is None:
            raise ConfigError(f"override {item!r}: {part!r} is not a {cls.LABEL} section")
        key = {v: k for k, v in cls.ALIASES.items()}.get(name, name)
        if not isinstance(node.get(key, {}), dict):
            raise ConfigError(f"override {item!r}: {key!r} is not an object")
        node = node.setdefault(key, {})
        cls = sub
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    name = cls.ALIASES.get(leaf, leaf)
    if name not in names:
        known = sorted(
            {k for k, v in cls.ALIASES.items() if v in names} | names - set(cls.ALIASES.values())
        )
        raise ConfigError(f"override {item!r}: unknown {cls.LABEL} field {leaf!r}; known: {known}")
    node[{v: k for k, v in cls.ALIASES.items()}.get(name, name)] = parse_value(raw)


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``override`` laid over it, nested objects merged key by key (a copy)."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out
