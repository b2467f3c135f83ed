"""dialjudge.toml: judges of every backend, sampling presets, and an error naming the key for every mistake."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from dialjudge.core import config as config_module
from dialjudge.core.config import (
    BUNDLED_JUDGE,
    CONFIG_ENV,
    SAMPLING_PRESETS,
    Config,
    Sampling,
    load_config,
    parse_config,
)
from dialjudge.core.errors import ConfigError


def write_config(tmp_path: Path, body: str, name: str = "dialjudge.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def config_error(tmp_path: Path, body: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(write_config(tmp_path, body))
    return str(info.value)


def test_judges_of_every_backend_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(tmp_path, """
        [judges.local]
        backend = "llama"
        model_path = "~/models/qwen2.5-7b-instruct-q4.gguf"
        n_threads = 2
        n_ctx = 2048

        [judges.gpt]
        backend = "openai"
        base_url = "https://api.example.com/v1"
        model = "gpt-4o-mini"
        api_key_env = "MY_TEST_KEY"
        endpoint = "completions"
        concurrency = 8
        timeout = 30
        max_retries = 2

        [judges.stub]
        backend = "fake"
        model = "stub-model"
        options = { garbage_every = 3 }
    """)
    monkeypatch.setenv("MY_TEST_KEY", "sk-test")
    config = load_config(path)

    assert set(config.judges) == {BUNDLED_JUDGE, "local", "gpt", "stub"}
    local = config.judge("local")
    assert local.backend == "llama"
    assert local.model_path == str(Path("~/models/qwen2.5-7b-instruct-q4.gguf").expanduser())
    assert local.model == "qwen2.5-7b-instruct-q4"  # the label defaults to the file's stem
    assert (local.n_threads, local.n_ctx) == (2, 2048)

    gpt = config.judge("gpt")
    assert (gpt.backend, gpt.base_url, gpt.model, gpt.endpoint) == (
        "openai", "https://api.example.com/v1", "gpt-4o-mini", "completions")
    assert (gpt.concurrency, gpt.max_retries) == (8, 2)
    assert gpt.timeout == 30.0 and isinstance(gpt.timeout, float)
    assert gpt.api_key_env == "MY_TEST_KEY" and gpt.api_key() == "sk-test"

    stub = config.judge("stub")
    assert stub.backend == "fake" and stub.model == "stub-model"
    assert dict(stub.extra) == {"garbage_every": 3}
    assert stub.sampling == Sampling()  # greedy unless told otherwise


def test_bundled_judge_is_always_there_and_can_be_overridden(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, ""))
    assert config.judge(BUNDLED_JUDGE).backend == "llama"
    assert config.judge(BUNDLED_JUDGE).model_path is None  # None means the bundled GGUF

    overridden = load_config(write_config(tmp_path, """
        [judges.smollm2]
        backend = "fake"
    """, "other.toml"))
    assert overridden.judge(BUNDLED_JUDGE).backend == "fake"


def test_liu2023_preset_its_old_name_and_overrides(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, """
        [judges.chatgpt]
        backend = "fake"
        preset = "liu2023"

        [judges.old_name]
        backend = "fake"
        preset = "paper000"

        [judges.tuned]
        backend = "fake"
        preset = "paper000"
        temperature = 0.3
        seed = 7
    """))
    chatgpt = config.judge("chatgpt").sampling
    assert chatgpt.temperature == 0.7
    assert chatgpt.frequency_penalty == 0.2
    assert chatgpt.presence_penalty == 0.0
    assert chatgpt == SAMPLING_PRESETS["liu2023"] == config.judge("old_name").sampling

    tuned = config.judge("tuned").sampling
    assert tuned.temperature == 0.3 and tuned.seed == 7
    assert tuned.frequency_penalty == 0.2  # the rest still comes from the preset
    assert tuned.to_dict()["frequency_penalty"] == 0.2


def test_unknown_judge_name_lists_the_configured_ones() -> None:
    config = parse_config({"judges": {"alpha": {"backend": "fake"}}})
    with pytest.raises(ConfigError, match=r"no judge named 'beta' \(configured: alpha, smollm2\)"):
        config.judge("beta")


@pytest.mark.parametrize(("body", "expected"), [
    ("colour = 1\n", r"unknown key colour"),
    ("[data]\nfolders = []\n", r"unknown key data\.folders"),
    ("[templates]\npath = 'x'\n", r"unknown key templates\.path"),
    ("[judges.j]\nbackend = 'fake'\ntemprature = 0.5\n", r"unknown key judges\.j\.temprature"),
    ("data = 3\n", r"\[data\] must be a table"),
    ("judges = { j = 3 }\n", r"judges\.j must be a table"),
    ("[judges.j]\nmodel = 'x'\n", r"judges\.j\.backend is required"),
    ("[judges.j]\nbackend = 'vllm'\n", r"judges\.j\.backend must be one of fake, llama, openai, not 'vllm'"),
    ("[judges.j]\nbackend = 'fake'\nendpoint = 'embeddings'\n", r"judges\.j\.endpoint must be chat or completions"),
    ("[judges.j]\nbackend = 'fake'\npreset = 'creative'\n", r"judges\.j\.preset must be one of greedy, liu2023"),
    ("[judges.j]\nbackend = 'fake'\nmax_tokens = 'many'\n", r"judges\.j\.max_tokens must be an integer, not str"),
    ("[judges.j]\nbackend = 'fake'\nmax_tokens = true\n", r"judges\.j\.max_tokens must be an integer, not a boolean"),
    ("[judges.j]\nbackend = 'fake'\nseed = 1.5\n", r"judges\.j\.seed must be an integer, not float"),
    ("[judges.j]\nbackend = 'fake'\ntemperature = 'hot'\n", r"judges\.j\.temperature must be a number, not str"),
    ("[judges.j]\nbackend = 'fake'\ntemperature = false\n", r"judges\.j\.temperature must be a number, not a boolean"),
    ("[judges.j]\nbackend = 'fake'\nmodel = 3\n", r"judges\.j\.model must be a string, not int"),
    ("[judges.j]\nbackend = 'fake'\noptions = 3\n", r"judges\.j\.options must be a table, not int"),
    ("[judges.j]\nbackend = 'fake'\nconcurrency = 0\n", r"judges\.j\.concurrency must be at least 1"),
    ("[judges.j]\nbackend = 'openai'\nmodel = 'gpt-4o'\n", r"judges\.j\.base_url is required for the openai backend"),
    ("[judges.j]\nbackend = 'openai'\nbase_url = 'http://x/v1'\n",
     r"judges\.j\.model is required for the openai backend"),
    ("[judges.j]\nbackend = 'llama'\nn_threads = 0\n", r"judges\.j\.n_threads must be at least 1, not 0"),
    ("[judges.j]\nbackend = 'llama'\nn_threads_batch = -2\n", r"judges\.j\.n_threads_batch must be at least 1"),
    ("[judges.j]\nbackend = 'llama'\nn_gpu_layers = -2\n",
     r"judges\.j\.n_gpu_layers must be at least -1 \(-1 offloads every layer\), not -2"),
    ("[judges.j]\nbackend = 'llama'\nn_gpu_layers = 'all'\n", r"judges\.j\.n_gpu_layers must be an integer, not str"),
    ("[data]\ndirs = 'data'\n", r"data\.dirs must be a list of paths"),
    ("[templates]\ndirs = [1]\n", r"templates\.dirs must be a list of paths"),
])
def test_every_mistake_names_its_key(tmp_path: Path, body: str, expected: str) -> None:
    message = config_error(tmp_path, body)
    assert str(tmp_path / "dialjudge.toml") in message  # which file
    assert re.search(expected, message), message


def test_api_key_in_the_file_is_refused(tmp_path: Path) -> None:
    message = config_error(tmp_path, """
        [judges.gpt]
        backend = "openai"
        base_url = "https://api.example.com/v1"
        model = "gpt-4o"
        api_key = "sk-secret"
    """)
    assert "judges.gpt.api_key" in message
    assert "api_key_env" in message  # says what to do instead
    assert "sk-secret" not in message  # never echoes the secret


def test_invalid_toml_and_unreadable_files_are_config_errors(tmp_path: Path) -> None:
    assert "not valid TOML" in config_error(tmp_path, "[judges.j\nbackend = 'fake'\n")

    binary = tmp_path / "latin1.toml"
    binary.write_bytes("[data]\ndirs = ['caf\xe9']\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(binary)

    folder = tmp_path / "folder.toml"
    folder.mkdir()
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(folder)


def test_config_env_pointing_at_a_missing_file_is_an_error(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nowhere" / "dialjudge.toml"
    monkeypatch.setenv(CONFIG_ENV, str(missing))
    with pytest.raises(ConfigError, match=rf"{missing}: file not found \(named by \${CONFIG_ENV}\)"):
        load_config()


def test_absent_default_file_gives_the_bundled_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CONFIG_ENV)
    monkeypatch.setattr(config_module, "user_config_dir", lambda: tmp_path / "config-home")
    assert config_module.config_path() == tmp_path / "config-home" / "dialjudge.toml"

    config = load_config()
    assert config.path is None
    assert config.data_dirs == () and config.template_dirs == ()
    assert list(config.judges) == [BUNDLED_JUDGE]
    assert config.judge(BUNDLED_JUDGE).backend == "llama"


def test_env_config_is_the_one_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(tmp_path, "[judges.from_env]\nbackend = 'fake'\n")
    monkeypatch.setenv(CONFIG_ENV, str(path))
    config = load_config()
    assert config.path == path
    assert "from_env" in config.judges


def test_relative_dirs_resolve_against_the_config_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    folder = tmp_path / "project" / "conf"
    folder.mkdir(parents=True)
    path = write_config(folder, f"""
        [data]
        dirs = ["data", "../shared", "{tmp_path / 'absolute'}", "~/corpora"]

        [templates]
        dirs = ["my-templates"]
    """)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the working directory must not matter

    config = load_config(path)
    assert config.data_dirs == (
        (folder / "data").resolve(),
        (tmp_path / "project" / "shared").resolve(),
        tmp_path / "absolute",
        home / "corpora",
    )
    assert config.template_dirs == ((folder / "my-templates").resolve(),)


def test_parse_config_without_a_file_names_config_in_errors() -> None:
    with pytest.raises(ConfigError, match=r"^config: unknown key bogus"):
        parse_config({"bogus": 1})
    assert isinstance(parse_config({}), Config)


def test_local_judge_threads_and_gpu_layers(tmp_path: Path) -> None:
    path = write_config(tmp_path, """
        [judges.laptop]
        backend = "llama"

        [judges.tuned]
        backend = "llama"
        n_threads = 2
        n_threads_batch = 4
        n_gpu_layers = 12

        [judges.all_on_gpu]
        backend = "llama"
        n_gpu_layers = -1
    """)
    judges = load_config(path).judges
    # Unset means: every core, and every layer on the GPU where the build can offload (decided at load).
    assert (judges["laptop"].n_threads, judges["laptop"].n_threads_batch, judges["laptop"].n_gpu_layers) == \
        (None, None, None)
    assert (judges["tuned"].n_threads, judges["tuned"].n_threads_batch, judges["tuned"].n_gpu_layers) == (2, 4, 12)
    assert judges["all_on_gpu"].n_gpu_layers == -1
