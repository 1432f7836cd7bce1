"""Drives a running Terrace with a real third-party MCP client: the MCP Python SDK.

Run by `gateway/tests/it/mcp_client.rs` (which starts the gateway on loopback and writes the
configuration this reads) with the Python of `target/ci-venv` (`.ci/requirements.txt`).

1. With an API key: list the tools; call every tool once with valid arguments and once with
   invalid ones; validate every result the way the TypeScript SDK does (Ajv, JSON Schema 2020-12):
   a success's `structuredContent` against the tool's `outputSchema` (with format checks), and a
   failure must be `isError` with text and no `structuredContent`. The SDK validates successes
   against the output schema itself too.
2. OAuth, with the SDK's own OAuth client: the registration body of each common host (Claude,
   Cursor, VS Code, the MCP Inspector), signed in once at `localhost` and once at `127.0.0.1`;
   then two parallel refreshes of one token (both answered with the same pair).

Prints one JSON report on standard output; exits 1 when any check failed.
"""

import asyncio
import html
import json
import re
import sys
from urllib.parse import parse_qs, urlparse

import httpx2 as httpx
from jsonschema import Draft202012Validator

from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

FAILURES: list[str] = []


def fail(message: str) -> None:
    FAILURES.append(message)


def result_dict(result) -> dict:
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


def text_of(result: dict) -> str:
    return "\n".join(c.get("text", "") for c in result.get("content", []))


# ---------------------------------------------------------------------------------------------
# 1. Every tool, valid and invalid arguments, every result validated.


def invalid_arguments(tool: dict) -> dict:
    """Arguments the tool must refuse: an object where its first argument's value goes (no tool
    takes an object there), or an argument it does not have."""
    props = tool["inputSchema"].get("properties", {})
    required = tool["inputSchema"].get("required", [])
    names = required or list(props)
    if names:
        return {names[0]: {"not": "a valid value"}}
    return {"not_an_argument": 1}


async def every_tool(cfg: dict, report: dict) -> None:
    headers = {"Authorization": f"Bearer {cfg['api_key']}"}
    url = f"{cfg['base']}/mcp"
    async with httpx.AsyncClient(headers=headers, timeout=120) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            listed = await client.list_tools()
            tools = {t.name: t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools}
            report["tools_listed"] = len(tools)
            missing = sorted(set(tools) - set(cfg["valid"]))
            if missing:
                fail(f"no valid arguments written for {missing}")
            validators = {}
            for name, tool in tools.items():
                for key in ("inputSchema", "outputSchema"):
                    if key in tool:
                        try:
                            Draft202012Validator.check_schema(tool[key])
                        except Exception as e:  # noqa: BLE001
                            fail(f"{name}.{key} is not a valid 2020-12 schema: {e}")
                if "outputSchema" in tool:
                    validators[name] = Draft202012Validator(
                        tool["outputSchema"], format_checker=Draft202012Validator.FORMAT_CHECKER
                    )
            calls = {}
            order = [n for n in tools if n != "account_revoke_key"] + (
                ["account_revoke_key"] if "account_revoke_key" in tools else []
            )
            created_key_id = None
            for name in order:
                args = dict(cfg["valid"].get(name, {}))
                if name == "account_revoke_key" and created_key_id is not None:
                    args["key_id"] = created_key_id
                entry = {}
                for kind, arguments in (("valid", args), ("invalid", invalid_arguments(tools[name]))):
                    try:
                        raw = await client.call_tool(name, arguments)
                    except Exception as e:  # noqa: BLE001 - the SDK refused the result
                        fail(f"{name} ({kind}): the SDK raised {type(e).__name__}: {e}")
                        entry[kind] = {"raised": str(e)}
                        continue
                    r = result_dict(raw)
                    text = text_of(r)
                    is_error = bool(r.get("isError"))
                    info = {"is_error": is_error, "chars": len(text)}
                    if is_error:
                        if "structuredContent" in r:
                            fail(f"{name} ({kind}): an error result carries structuredContent")
                        if not text.strip():
                            fail(f"{name} ({kind}): an error result has no text")
                        body = json.loads(r["content"][-1]["text"])
                        info["code"] = body.get("error", {}).get("code")
                        info["message"] = r["content"][0]["text"].splitlines()[0][:160]
                        locs = [d.get("loc", []) for d in body.get("detail", []) if isinstance(d, dict)]
                        if any(loc and loc[0] in ("query", "path", "body") for loc in locs):
                            fail(f"{name} ({kind}): HTTP locations in a tool error: {locs}")
                    else:
                        sc = r.get("structuredContent")
                        if name in validators:
                            if sc is None:
                                fail(f"{name} ({kind}): success without structuredContent")
                            else:
                                errors = sorted(validators[name].iter_errors(sc), key=lambda e: list(e.path))
                                for e in errors[:5]:
                                    fail(f"{name} ({kind}): {list(e.absolute_path)}: {e.message[:200]}")
                        if name == "account_create_key" and sc:
                            created_key_id = sc.get("key_id")
                    if kind == "valid" and is_error and info.get("code") == "validation_error":
                        fail(f"{name}: the valid arguments were refused: {text[:300]}")
                    if kind == "invalid" and not is_error:
                        fail(f"{name}: the invalid arguments {arguments} were accepted")
                    entry[kind] = info
                calls[name] = entry
            report["calls"] = calls
            ok = [n for n, e in calls.items() if e.get("valid", {}).get("is_error") is False]
            report["valid_calls_answered"] = len(ok)
            report["largest_result_chars"] = max(
                ((e.get("valid", {}).get("chars", 0), n) for n, e in calls.items()), default=(0, "")
            )
            # The batch tools with 100 UPRNs, compact and detailed: what an agent would read.
            sizes = {}
            for name in ("property_risk_batch", "property_planning_history_batch", "property_lease_batch"):
                if name not in tools:
                    continue
                for detail in (False, True):
                    r = result_dict(await client.call_tool(name, {"uprns": cfg["hundred_uprns"], "detail": detail}))
                    sc = r.get("structuredContent")
                    if r.get("isError"):
                        fail(f"{name} (100 UPRNs, detail={detail}): {text_of(r)[:300]}")
                        continue
                    for e in list(validators[name].iter_errors(sc))[:3]:
                        fail(f"{name} (100 UPRNs, detail={detail}): {list(e.absolute_path)}: {e.message[:200]}")
                    sizes[f"{name} detail={detail}"] = {
                        "chars": len(text_of(r)),
                        "credits_charged": sc["credits_charged"],
                        "answered": sc.get("answered"),
                    }
                    if len(text_of(r)) > cfg["budget_chars"]:
                        fail(f"{name} (100 UPRNs, detail={detail}): {len(text_of(r))} characters, over the budget")
            report["batch_100"] = sizes


# ---------------------------------------------------------------------------------------------
# 2. OAuth with the SDK's client, per host registration body, at localhost and 127.0.0.1.


class Storage:
    def __init__(self, client_info: OAuthClientInformationFull):
        self.client_info = client_info
        self.tokens: OAuthToken | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


HIDDEN = re.compile(r'<input type="hidden" name="([^"]*)" value="([^"]*)"')


def hidden_fields(page: str) -> dict:
    return {html.unescape(k): html.unescape(v) for k, v in HIDDEN.findall(page)}


class Browser:
    """The account holder: opens the authorization URL, signs in, allows."""

    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.location: str | None = None

    async def open(self, authorization_url: str) -> None:
        base = authorization_url.split("/oauth/authorize")[0]
        async with httpx.AsyncClient(follow_redirects=False, timeout=60) as b:
            page = await b.get(authorization_url)
            if page.status_code != 200:
                raise RuntimeError(f"authorize page answered {page.status_code}: {page.text[:300]}")
            form = hidden_fields(page.text)
            form.update(email=self.cfg["email"], password=self.cfg["password"])
            consent = await b.post(f"{base}/oauth/authorize", data=form)
            if consent.status_code != 200:
                raise RuntimeError(f"sign-in answered {consent.status_code}: {consent.text[:300]}")
            form = hidden_fields(consent.text)
            form["action"] = "allow"
            done = await b.post(f"{base}/oauth/authorize", data=form)
            if done.status_code != 303:
                raise RuntimeError(f"consent answered {done.status_code}: {done.text[:300]}")
            self.location = done.headers["location"]

    async def callback(self) -> AuthorizationCodeResult:
        q = parse_qs(urlparse(self.location).query)
        if "error" in q:
            raise RuntimeError(f"authorization error: {q}")
        return AuthorizationCodeResult(code=q["code"][0], state=q.get("state", [None])[0], iss=q.get("iss", [None])[0])


async def sign_in(cfg: dict, host_name: str, body: dict, at: str, report: dict) -> None:
    base = f"http://{at}:{cfg['port']}"
    label = f"{host_name} at {at}"
    async with httpx.AsyncClient(timeout=60) as raw:
        reg = await raw.post(f"{base}/oauth/register", json=body)
        if reg.status_code != 201:
            fail(f"{label}: registration answered {reg.status_code}: {reg.text[:300]}")
            return
        info = OAuthClientInformationFull.model_validate(reg.json())
    # The host's first redirect URI; a bare loopback one gets the port the host listens on.
    redirect = body["redirect_uris"][0]
    if redirect == "http://127.0.0.1/":
        redirect = "http://127.0.0.1:53682/"
    metadata = OAuthClientMetadata(
        client_name=body.get("client_name"),
        redirect_uris=[redirect],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    storage = Storage(info)
    browser = Browser(cfg)
    provider = OAuthClientProvider(
        server_url=f"{base}/mcp",
        client_metadata=metadata,
        storage=storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    entry = {"client_id": info.client_id, "redirect_uri": redirect}
    try:
        async with httpx.AsyncClient(auth=provider, timeout=60) as http:
            async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as client:
                names = {t.name for t in (await client.list_tools()).tools}
                entry["tools"] = len(names)
                if "account_create_key" in names:
                    fail(f"{label}: an OAuth caller is offered account_create_key")
                balance = result_dict(await client.call_tool("account_balance", {}))
                if balance.get("isError"):
                    fail(f"{label}: account_balance failed: {text_of(balance)[:300]}")
                entry["balance"] = balance.get("structuredContent", {}).get("balance")
                refused = result_dict(await client.call_tool("account_create_key", {"name": "from-oauth"}))
                if not refused.get("isError") or "structuredContent" in refused:
                    fail(f"{label}: account_create_key was not refused as a tool error: {refused}")
    except Exception as e:  # noqa: BLE001
        fail(f"{label}: the SDK's OAuth flow failed: {type(e).__name__}: {e}")
        report["oauth"][label] = {"failed": str(e)}
        return
    tokens = storage.tokens
    if tokens is None or not tokens.refresh_token:
        fail(f"{label}: no refresh token stored")
        return
    claims = json.loads(_b64(tokens.access_token.split(".")[1]))
    entry["aud"] = claims["aud"]
    if claims["aud"] != f"{base}/mcp":
        fail(f"{label}: the token's audience is {claims['aud']}, not {base}/mcp")
    report["oauth"][label] = entry


def _b64(part: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


async def refresh_race(cfg: dict, report: dict) -> None:
    """Two refreshes of one token at once, as two windows of one host do."""
    at = "127.0.0.1"
    base = f"http://{at}:{cfg['port']}"
    body = cfg["hosts"][0][1]
    async with httpx.AsyncClient(timeout=60) as raw:
        info = (await raw.post(f"{base}/oauth/register", json=body)).json()
        storage = Storage(OAuthClientInformationFull.model_validate(info))
        browser = Browser(cfg)
        provider = OAuthClientProvider(
            server_url=f"{base}/mcp",
            client_metadata=OAuthClientMetadata(redirect_uris=body["redirect_uris"][:1], token_endpoint_auth_method="none"),
            storage=storage,
            redirect_handler=browser.open,
            callback_handler=browser.callback,
        )
        async with httpx.AsyncClient(auth=provider, timeout=60) as http:
            async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as client:
                await client.list_tools()
        refresh = storage.tokens.refresh_token
        form = {"grant_type": "refresh_token", "client_id": info["client_id"], "refresh_token": refresh}
        a, b = await asyncio.gather(
            raw.post(f"{base}/oauth/token", data=form), raw.post(f"{base}/oauth/token", data=form)
        )
        race = {"statuses": [a.status_code, b.status_code]}
        if (a.status_code, b.status_code) != (200, 200):
            fail(f"refresh race: {a.status_code} {a.text[:200]} / {b.status_code} {b.text[:200]}")
        else:
            race["same_pair"] = a.json() == b.json() or (
                a.json()["refresh_token"] == b.json()["refresh_token"]
                and a.json()["access_token"] == b.json()["access_token"]
            )
            if not race["same_pair"]:
                fail("refresh race: the two answers differ")
            token = a.json()["access_token"]
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx.AsyncClient(headers=headers, timeout=60) as http:
                async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as client:
                    r = result_dict(await client.call_tool("account_balance", {}))
                    race["winner_token_works"] = not r.get("isError")
                    if r.get("isError"):
                        fail(f"refresh race: the new access token does not work: {text_of(r)[:200]}")
        report["refresh_race"] = race


async def phase(label: str, step) -> None:
    """Runs one phase; an exception that escapes it is a failure of its own, so the report is
    always printed."""
    try:
        await step
    except Exception as e:  # noqa: BLE001
        fail(f"{label}: raised {type(e).__name__}: {e!r}")


async def main() -> int:
    cfg = json.load(open(sys.argv[1]))
    report: dict = {"oauth": {}}
    await phase("every tool", every_tool(cfg, report))
    for host_name, body in cfg["hosts"]:
        for at in ("localhost", "127.0.0.1"):
            await phase(f"{host_name} at {at}", sign_in(cfg, host_name, body, at, report))
    await phase("refresh race", refresh_race(cfg, report))
    report["failures"] = FAILURES
    print(json.dumps(report, indent=1, sort_keys=True))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
