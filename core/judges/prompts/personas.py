"""Judge personas (paper 002, section 3.7): a short text that sets the judge's viewpoint.

Shipped personas live in ``prompts/personas.toml`` (one table per persona, with
``description`` and ``text``). A template folder may hold its own
``personas.toml``; personas a user saves go to ``<user_data_dir>/personas/``,
one file each. Later sources override earlier ones by name; shipped files are
never written.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...config import user_data_dir
from ...errors import TemplateError
from .naming import _check_name, toml_string
from .templates import PERSONAS_FILE, parse_template, toml_error_position, user_template_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

NEUTRAL = "neutral"


@dataclass(frozen=True)
class Persona:
    name: str
    description: str
    text: str

    @property
    def is_neutral(self) -> bool:
        return not self.text.strip()


def user_persona_dir() -> Path:
    return user_data_dir() / "personas"


def load_personas(extra_dirs: Sequence[Path] = ()) -> dict[str, Persona]:
    """Shipped personas, then each extra folder's personas, then the user's saved ones."""
    shipped = resources.files("dialjudge.prompts") / PERSONAS_FILE
    found = _parse_personas(shipped.read_text(encoding="utf-8"), str(shipped))
    for directory in extra_dirs:
        directory = Path(directory)
        if (directory / PERSONAS_FILE).is_file():
            found.update(_read(directory / PERSONAS_FILE))
        if (directory / "personas").is_dir():
            for path in sorted((directory / "personas").glob("*.toml")):
                found.update(_read_single(path))
    user_dir = user_persona_dir()
    if user_dir.is_dir():
        for path in sorted(user_dir.glob("*.toml")):
            found.update(_read_single(path))
    return found


def get_persona(name: str, extra_dirs: Sequence[Path] = ()) -> Persona:
    personas = load_personas(extra_dirs)
    try:
        return personas[name]
    except KeyError:
        raise TemplateError(f"no persona named {name!r} (known: {', '.join(sorted(personas))})") from None


def save_persona(persona: Persona) -> Path:
    """Write a persona to ``<user_data_dir>/personas/<name>.toml`` and return the path."""
    _check_name(persona.name, "persona")
    path = user_persona_dir() / f"{persona.name}.toml"
    text = (
        f"name = {toml_string(persona.name)}\n"
        f"description = {toml_string(persona.description)}\n"
        f"text = {toml_string(persona.text)}\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def save_template(template_text: str, name: str) -> Path:
    """Validate a template and write it to ``<user_data_dir>/templates/<name>.toml``.

    It then overrides a shipped template of the same name when templates load;
    the shipped file itself is never touched.
    """
    _check_name(name, "template")
    path = user_template_dir() / f"{name}.toml"
    template = parse_template(template_text, str(path))
    if template.name != name:
        raise TemplateError(f"the template's name is {template.name!r}, not {name!r}", source=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(template_text, encoding="utf-8")
    return path


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TemplateError(f"cannot read: {exc.strerror}", source=str(path)) from None
    except UnicodeDecodeError:
        raise TemplateError("not UTF-8 text", source=str(path)) from None


def _loads(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message, line, column = toml_error_position(str(exc), text)
        raise TemplateError(f"not valid TOML: {message}", source=source, line=line, column=column) from None
    except RecursionError:  # tomllib recurses once per level of nested arrays or tables
        raise TemplateError("not valid TOML: arrays or tables nested too deeply", source=source) from None


def _read(path: Path) -> dict[str, Persona]:
    return _parse_personas(_read_text(path), str(path))


def _parse_personas(text: str, source: str) -> dict[str, Persona]:
    raw = _loads(text, source)
    out = {}
    for name, table in raw.items():
        if not isinstance(table, Mapping):
            raise TemplateError(f"{name} must be a table with description and text", source=source)
        out[name] = _persona(name, table, source)
    return out


def _read_single(path: Path) -> dict[str, Persona]:
    raw = _loads(_read_text(path), str(path))
    name = raw.get("name", path.stem)
    if name != path.stem:
        raise TemplateError(f"persona name {name!r} differs from the file name {path.name!r}", source=str(path))
    return {name: _persona(name, raw, str(path))}


def _persona(name: str, table: Mapping[str, Any], source: str) -> Persona:
    _check_name(name, "persona", source)
    unknown = sorted(set(table) - {"name", "description", "text"})
    if unknown:
        raise TemplateError(f"persona {name!r}: unknown key {unknown[0]!r} (allowed: description, text)",
                            source=source)
    for key in ("description", "text"):
        if not isinstance(table.get(key, ""), str):
            raise TemplateError(f"persona {name!r}: {key} must be a string", source=source)
    if "text" not in table:
        raise TemplateError(f"persona {name!r}: text is required (empty text means no persona)", source=source)
    return Persona(name=name, description=table.get("description", ""), text=table["text"].strip())
