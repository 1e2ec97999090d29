"""The ``/rerank`` API: every bad argument is a named error, through ``gradio_client`` and plain
HTTP alike (never a 500, never a silent fallback); the JSON numbers from 1 and says how the
pool was treated. The real app (``logrerank.app.main.demo``) is launched on a free port over
the tiny models."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from logrerank.app import api_args, api_http, state
from logrerank.app.api_args import ApiArgError, check_args
from tests.browser.harness import serve_demo

DEFAULTS = {"top_k": 10, "tau_sim": 0.75, "delta": 0.25, "k": 8, "blend": 0.5}
Q = "Do statins reduce the risk of dementia?"
P = (
    "Title: Cohort\nStatin users had a lower risk of dementia. The cohort was large.\n\n"
    "Trials showed no effect of statins on cognition. Bias may explain the cohort result."
)

BAD_ARGS = [  # (arguments, the words the error must carry)
    ({"question": 5}, "question must be a string, got int"),
    ({"question": "  "}, "question is empty"),
    ({"passages": ["a", "b"]}, "passages must be a string, got list"),
    ({"top_k": -5}, "top_k must be a whole number from 1 to 100, got -5"),
    ({"top_k": 2.5}, "top_k must be a whole number"),
    ({"top_k": "10"}, "top_k must be a whole number from 1 to 100, got str"),
    ({"top_k": True}, "top_k must be a whole number from 1 to 100, got bool"),
    ({"tau_sim": 5}, "tau_sim must be a number from -1 to 1, got 5"),
    ({"delta": -0.1}, "delta must be a number from 0 to 1"),
    ({"k": -1}, "k must be a whole number from 0 to 64, got -1"),
    ({"blend": 1.5}, "blend must be a number from 0 to 1, got 1.5"),
    ({"ablations": ["no such part"]}, "ablations: unknown part 'no such part'"),
    ({"ablations": "typed"}, "ablations must be a list of part names"),
    ({"cross_encoder": "/no/such/folder"}, "cross_encoder '/no/such/folder' is not"),
    ({"cross_encoder": 3}, "cross_encoder must be a string, got int"),
    ({"upload": "/tmp/x.json"}, "upload must be empty"),
]


def _args(**over):
    return {"question": Q, "passages": P, **over}


# ---------------------------------------------------------------------------------- checks
@pytest.mark.parametrize("over, words", BAD_ARGS)
def test_check_args_names_the_bad_argument(over, words) -> None:
    with pytest.raises(ApiArgError) as err:
        check_args(DEFAULTS, **_args(**over))
    assert words in str(err.value)


def test_check_args_fills_defaults_and_reads_part_names() -> None:
    c = check_args(DEFAULTS, **_args(top_k=3.0, ablations=["typed", "graph stage (GAT)"]))
    assert (c.top_k, c.tau_sim, c.k) == (3, 0.75, 8) and isinstance(c.top_k, int)
    assert c.parts == ("graph stage (GAT)", "typed relations")
    assert check_args(DEFAULTS, **_args()).parts == tuple(state.ABLATIONS)
    assert check_args(DEFAULTS, **_args(ablations=[])).parts == ()
    with pytest.raises(ApiArgError, match="unknown argument 'topk'"):
        check_args(DEFAULTS, **_args(topk=3))


@pytest.mark.parametrize(
    "body, words",
    [
        (b"not json", "not JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"question": 5}', "send them inside data"),
        (b'{"data": "q"}', '"data" must be a list'),
        (b'{"data": ["q"]}', "passages is missing"),
        (b'{"data": []}', "question is missing"),
        (b'{"data": ["q", "p", "", 1, 1, 1, 1, 1, null, "", 7]}', "too many values"),
        (b'{"data": {"question": "q", "passages": "p", "tau": 1}}', "unknown argument 'tau'"),
    ],
)
def test_complete_body_names_what_is_malformed(body, words) -> None:
    with pytest.raises(ApiArgError, match=words):
        api_http.complete_body(body, "data")


def test_complete_body_fills_omitted_arguments_with_null() -> None:
    out = json.loads(api_http.complete_body(b'{"data": ["q", "p"], "session_hash": "x"}', "data"))
    assert out["data"] == ["q", "p"] + [None] * (len(api_args.PARAMS) - 2)
    out = json.loads(api_http.complete_body(b'{"passages": "p", "question": "q"}', "named"))
    assert list(out) == list(api_args.PARAMS) and out["top_k"] is None
    with pytest.raises(ApiArgError, match="passages is missing"):
        api_http.complete_body(b'{"question": 5}', "named")


# ---------------------------------------------------------------------------------- served
@pytest.fixture(scope="module")
def app_url(make_tiny_model, tiny_dir):
    """The real app's demo over the tiny models, on a free port."""
    from logrerank.app import main
    from logrerank.models.cross_encoder import CrossEncoder

    backend = state.Backend.load(make_tiny_model(), CrossEncoder(str(tiny_dir), device="cpu"))
    saved, main.BACKEND._backend = main.BACKEND._backend, backend
    yield from serve_demo(main.demo)
    main.BACKEND._backend = saved


@pytest.fixture(scope="module")
def client(app_url):
    from gradio_client import Client

    return Client(app_url, verbose=False)


def _post(url: str, body: object) -> tuple[int, object]:
    """POST JSON; (status, parsed answer); a queued call's events are read to the end."""
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            status, out = r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")
    if "event_id" not in out:
        return status, out
    base = url.replace("/call/v2/", "/call/")
    with urllib.request.urlopen(f"{base}/{out['event_id']}", timeout=120) as r:
        text = r.read().decode()
    event = [ln[7:] for ln in text.splitlines() if ln.startswith("event: ")][-1]
    data = json.loads([ln[6:] for ln in text.splitlines() if ln.startswith("data: ")][-1])
    return (200 if event == "complete" else 400), data


def _http(app_url: str, **over) -> tuple[int, object]:
    args = _args(**over)
    return _post(f"{app_url}/gradio_api/call/rerank", {"data": args})


@pytest.mark.parametrize("over, words", BAD_ARGS)
def test_gradio_client_gets_named_errors(client, over, words) -> None:
    with pytest.raises(Exception) as err:
        client.predict(**_args(**over), api_name="/rerank")
    assert words in str(err.value)


@pytest.mark.parametrize("over, words", BAD_ARGS)
def test_plain_http_gets_named_errors(app_url, over, words) -> None:
    status, out = _http(app_url, **over)
    assert status == 400 and words in out["error"], out


@pytest.mark.parametrize(
    "route, body, words",
    [
        ("call/v2/rerank", {"question": 5}, "passages is missing"),
        ("call/v2/rerank", {"question": 5, "passages": P}, "question must be a string, got int"),
        ("call/v2/rerank", {"question": Q, "passages": P, "zzz": 1}, "unknown argument 'zzz'"),
        ("call/rerank", {"question": 5}, "send them inside data"),
        ("call/rerank", {"data": [Q]}, "passages is missing"),
        ("call/rerank", {"data": [Q, P, "", 10, 0.5, 0.2, 8, 0.5, None, "", 1]}, "too many"),
        ("run/rerank", {"data": [Q, P, "", 10, 5]}, "tau_sim must be a number from -1 to 1"),
    ],
)
def test_malformed_bodies_are_named_400s(app_url, route, body, words) -> None:
    status, out = _post(f"{app_url}/gradio_api/{route}", body)
    assert status == 400 and words in out["error"], out


def test_answer_numbers_from_1_with_numbers_and_says_what_ranked(client) -> None:
    out = client.predict(Q, P, tau_sim=0.5, ablations=["use_global", "typed"], api_name="/rerank")
    assert out["settings"]["tau_sim"] == 0.5 and out["settings"]["parts_off"] == [
        "cross_passage",
        "links",
        "lexical",
    ]
    first = out["sentences"][0]
    assert list(first)[:3] == ["rank", "text", "score"]
    assert first["ref"] == f"P{first['passage']}·S{first['sentence']}" and first["passage"] >= 1
    units = out["context_units"]
    assert units and all(u["passage"] >= 1 and u["sentence"] >= 1 for u in units)
    assert {u["ref"] for u in units} <= {s["ref"] for s in out["sentences"]}
    for row in out["agreement"]:
        assert all(
            row[k] is None or isinstance(row[k], (int, float))
            for k in ("overlap_at_5", "overlap_at_10", "kendall_tau")
        )
    pool = out["pool"]
    assert pool["headline"].startswith("Ranking: ") and 0.0 <= pool["graph_weight"] <= 1.0
    assert pool["graph_gate"] is None or isinstance(pool["graph_gate"], float)
    assert pool["graph_effect"] in ("switched off", "graph share ~0", "no change", "changed order")
    assert not {"route", "pool_kind"} & set(pool)
    assert "count from 1" in out["numbering"]


def test_local_only_is_said_so(client) -> None:
    out = client.predict(Q, P, ablations=[], api_name="/rerank")
    assert out["pool"]["graph_effect"] == "switched off" and out["pool"]["graph_weight"] == 0
    assert out["pool"]["headline"].startswith("Ranking: local scores only")


def test_plain_http_named_and_short_calls_work(app_url) -> None:
    status, out = _post(f"{app_url}/gradio_api/call/rerank", {"data": [Q, P]})
    assert status == 200 and out[0]["sentences"], out
    status, out = _post(f"{app_url}/gradio_api/call/v2/rerank", {"question": Q, "passages": P})
    assert status == 200 and out[0]["passages"][0]["passage"] >= 1, out


def test_api_page_is_prose_and_its_example_runs(app_url) -> None:
    with urllib.request.urlopen(f"{app_url}/gradio_api/info", timeout=60) as r:
        info = json.load(r)["named_endpoints"]["/rerank"]
    assert "``" not in info["description"] and ":func:" not in info["description"]
    example = [p["example_input"] for p in info["parameters"]]
    assert "..." not in example, example
    status, out = _post(f"{app_url}/gradio_api/call/rerank", {"data": example})
    assert status == 200 and out[0]["sentences"], out


def test_api_page_snippets_run_as_shown(app_url) -> None:
    """The page's Python and cURL snippets send the examples and the defaults, on one line
    each (a newline inside would break both); every argument is described in words."""
    with urllib.request.urlopen(f"{app_url}/gradio_api/info", timeout=60) as r:
        params = json.load(r)["named_endpoints"]["/rerank"]["parameters"]
    body = {
        p["parameter_name"]: p["parameter_default"]
        if p["parameter_has_default"]
        else p["example_input"]
        for p in params
    }
    assert list(body) == list(api_args.PARAMS)
    assert not any("\n" in str(v) for v in body.values()), body
    assert all(p["python_type"]["description"] for p in params)
    status, out = _post(f"{app_url}/gradio_api/call/v2/rerank", body)
    assert status == 200 and out[0]["sentences"], out


def test_a_result_request_without_event_id_is_explained(app_url) -> None:
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(f"{app_url}/gradio_api/call/rerank/", timeout=60)
    assert err.value.code == 400
    assert "no event id" in json.loads(err.value.read())["error"]
