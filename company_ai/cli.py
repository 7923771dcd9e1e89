"""`company-ai`: ask the memory from the terminal.

The read commands (timeline, dossier) import only the stdlib part of `core`, so they
answer in a few tens of milliseconds; dagster and pydantic load only for the commands
that need them. Everything printed from a store goes through `core.terminal`, so stored
text can never drive the terminal.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from company_ai.core.crm import UnknownContactError, find_contact, load_dossier
from company_ai.core.store import Store, StoreError, Stores
from company_ai.core.terminal import escape_controls, escape_json, progress, shorten
from company_ai.settings import Settings

EXIT_STATUS = """exit status: 0 done; 1 an error (the message says what to do); 2 a refused
argument (or, for `gate`, unsupported claims); 141 the reader of the output left early
(e.g. `| head`), as for any program stopped by SIGPIPE."""
PIPE_CLOSED = 128 + 13  # the shell's status for a program stopped by SIGPIPE
MAX_DAYS = 90  # the sample history is 90 days long: a demo never needs more
MAX_LIMIT = 100
ERROR_CHARS = 1000


GOOGLE_SCOPES = {
    "contacts": "https://www.googleapis.com/auth/contacts.readonly",
    "gmail-send": "https://www.googleapis.com/auth/gmail.send",
    "gmail-read": "https://www.googleapis.com/auth/gmail.readonly",
}


class CliError(Exception):
    """Printed as `company-ai: error: …` with exit status 1."""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        args.settings = Settings.from_env()  # read once; a bad variable is a clear error
        stores = Stores(
            args.data_dir or args.settings.data_dir,
            database_url=args.settings.database_url,
            chroma_url=args.settings.chroma_url,
        )
        status = args.run(stores, args)
        sys.stdout.flush()  # here, not at exit, so a closed pipe is caught below
        return status
    except BrokenPipeError:
        # The reader (`head`, a pager) has gone: stop quietly. Point stdout at /dev/null
        # so the interpreter's own flush at exit cannot complain again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return PIPE_CLOSED
    except (CliError, StoreError, UnknownContactError, ValueError, RuntimeError) as exc:
        message = escape_controls(shorten(str(exc), ERROR_CHARS))
        print(f"company-ai: error: {message}", file=sys.stderr)
        return 1


def _out(text: str, end: str = "\n") -> None:
    """Print text that may come from a store or a file: its control characters escaped."""
    print(escape_controls(text), end=end)


def _out_json(text: str) -> None:
    print(escape_json(text))


def _whole(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [low, high], refused with a clear message."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {shorten(repr(text))}") from None
        if high is not None and not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}")
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}")
        return value

    return parse


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(
            f"must be a number greater than 0, not {shorten(repr(text))}"
        )
    return value


def _question(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def _day(text: str) -> str:
    from company_ai.core.install import check_day

    try:
        return check_day(text, "a day")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="company-ai", description=__doc__.splitlines()[0], epilog=EXIT_STATUS
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="the stores' directory (default: $COMPANY_AI_DATA_DIR or ./data)",
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    timeline = commands.add_parser("timeline", help="everything known about one person")
    timeline.add_argument("email")
    timeline.add_argument(
        "--json", action="store_true", help="print JSON for machines (bodies always included)"
    )
    timeline.add_argument(
        "--bodies", action="store_true", help="show every message's body, sent and received"
    )
    timeline.set_defaults(run=_timeline)

    dossier = commands.add_parser("dossier", help="what a drafter would be given")
    dossier.add_argument("email")
    dossier.set_defaults(run=_dossier)

    note = commands.add_parser("note", help="append a manual note episode")
    note.add_argument("email")
    note.add_argument("text")
    note.set_defaults(run=_note)

    gate = commands.add_parser(
        "gate",
        help="the fabrication gate: claims in a text that its sources do not support",
        description="Print every number, name, date or phrase claim in TEXTFILE that no"
        " --source file supports, and every pair of claims a sentence ties together that the"
        " sources pin on another subject (as outreach drafts are judged): each quoted in its"
        " sentence, the claim marked «so», with the reason it is held. The names a greeting"
        ' addresses ("Hi Dana,") are the reader\'s, never claims. Exit status 0: none; 2:'
        " some were found; 1: an error.",
    )
    gate.add_argument("textfile", type=Path, help="the text to check (- for stdin)")
    gate.add_argument(
        "--source",
        dest="sources",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="a source the text may draw on (repeat for several)",
    )
    gate.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="NAME",
        help="a name that is never a claim, e.g. the sender's (repeatable)",
    )
    gate.add_argument(
        "--json",
        action="store_true",
        help="print JSON for machines: each claim's text, kind, [start, end) character"
        " offsets in TEXTFILE, sentence and reason",
    )
    gate.set_defaults(run=_gate)

    importer = commands.add_parser(
        "import",
        help="import contacts from a CSV file (idempotent)",
        description="Import contacts from a UTF-8 CSV file with a header row. Columns: name"
        " (required), email, other_emails (separated by ;), company, title, city. Each bad"
        " row is reported by line and not imported; the good rows are. Running it again"
        " duplicates nothing. Only a regular file of at most 50 MB is read (a folder, pipe or"
        " device is refused). Exit status 0: every row imported; 1: some rows were bad, or"
        " the file was refused.",
    )
    importer.add_argument("csvfile", type=Path, metavar="contacts.csv")
    importer.set_defaults(run=_import)

    forget = commands.add_parser(
        "forget",
        help="remove one person from every place the system put them",
        description="Remove the person with EMAIL (any of their addresses) from the CRM,"
        " episodes, outreach, brain, recall, vectors, exports, state and mail files, and keep"
        " a tombstone (keyed hashes, no personal data) so that no sync, import, mail or vault"
        " note brings them back. Snapshots already taken keep them (they are backups); the"
        " next one does not. An interrupted forget is finished by running it again. Exit"
        " status 0: forgotten (now or before); 1: nobody has that address (nothing changed)"
        " or an error.",
    )
    forget.add_argument("email", nargs="?")
    forget.add_argument("--json", action="store_true", help="print the counts as JSON")
    forget.add_argument(
        "--reapply",
        action="store_true",
        help="forget again every forgotten person found in the CRM (after a restore)",
    )
    forget.set_defaults(run=_forget)

    scrub = commands.add_parser(
        "vectors-scrub",
        help="clear a stopped Chroma server's files of the vectors deleted on it",
        description="With the vector memory on a Chroma server (COMPANY_AI_CHROMA_URL), a"
        " forget deletes through its API, and the server's files keep the deleted bytes. Run"
        " this on the server's host, with the server stopped, on its persist directory (the"
        " --path of `chroma run`): it zeroes every deleted embedding in the index files,"
        " removes the log rows of deleted ids and the folders of deleted collections, and"
        " vacuums its SQLite file. Exit status 0: cleared; 1: not a Chroma directory, or an"
        " error.",
    )
    scrub.add_argument("path", type=Path, metavar="PATH")
    scrub.set_defaults(run=_vectors_scrub)

    google = commands.add_parser(
        "connect-google",
        help="one-time Google consent: write the OAuth token the Google sources read",
        description="Run Google's consent flow for an OAuth client (a Desktop app's"
        " client_secret.json from the Google Cloud console) in the browser, and write the"
        " authorized-user JSON (with its refresh token) to --out, readable by you only. Put"
        " its content in COMPANY_AI_GOOGLE_PEOPLE_TOKEN (and COMPANY_AI_GMAIL_TOKEN).",
    )
    google.add_argument("client_secrets", type=Path, metavar="client_secret.json")
    google.add_argument("--out", type=Path, default=Path("google-token.json"))
    google.add_argument(
        "--scope",
        dest="scopes",
        action="append",
        choices=sorted(GOOGLE_SCOPES),
        help="what to allow (repeatable; default: contacts)",
    )
    google.set_defaults(run=_connect_google)

    sample = commands.add_parser("sample", help="load the deterministic sample CRM")
    sample.add_argument("--contacts", type=_whole(1), default=2000, help="at least 1")
    sample.add_argument(
        "--density",
        type=_positive,
        default=1.0,
        help="scale the number of episodes per contact (greater than 0)",
    )
    sample.add_argument("--seed", type=int, default=7)
    sample.set_defaults(run=_sample)

    recall = commands.add_parser("recall", help="ask the recall pages a question")
    recall.add_argument("question", type=_question)
    recall.add_argument(
        "--limit",
        type=_whole(1, MAX_LIMIT),
        default=5,
        help=f"how many pages, 1 to {MAX_LIMIT} (default 5)",
    )
    recall.add_argument("--json", action="store_true", help="print JSON for machines")
    recall.set_defaults(run=_recall)

    page = commands.add_parser("page", help="print one recall page")
    page.add_argument("title")
    page.set_defaults(run=_page)

    stale = commands.add_parser("stale", help="pages whose status or goal may be out of date")
    stale.set_defaults(run=_stale)

    similar = commands.add_parser(
        "similar",
        help="have we seen something like this before? the nearest memories",
        description="The lines nearest to TEXT in the vector memory (episodes, and "
        "knowledge: brain facts, decisions and recall pages): a line many memories hold is "
        "shown once, with their count, days, contacts and the row it came from. Read-only.",
    )
    similar.add_argument("text", type=_question)
    similar.add_argument(
        "--in", dest="collection", choices=("episodes", "knowledge"), help="one collection only"
    )
    similar.add_argument("--contact", metavar="EMAIL", help="only memories about this contact")
    similar.add_argument("--type", dest="type_", metavar="TYPE", help="e.g. response, sent, person")
    similar.add_argument("--since", type=_day, metavar="DAY", help="from this day on")
    similar.add_argument("--until", type=_day, metavar="DAY", help="up to this day")
    similar.add_argument(
        "--limit",
        type=_whole(1, MAX_LIMIT),
        default=10,
        help=f"how many different lines, 1 to {MAX_LIMIT} (default 10)",
    )
    similar.add_argument("--json", action="store_true", help="print JSON for machines")
    similar.set_defaults(run=_similar)

    evaluate = commands.add_parser(
        "eval-retrieval", help="nDCG@10 and Recall@100 of keyword, dense and hybrid search"
    )
    evaluate.add_argument(
        "dir",
        type=Path,
        nargs="?",
        help="a BEIR folder; omit it to score the recall index "
        "against the sample vault's questions",
    )
    evaluate.add_argument("--json", action="store_true", help="print JSON for machines")
    evaluate.set_defaults(run=_eval_retrieval)

    audit = commands.add_parser(
        "audit",
        help="the CRM audit: contacts, warmth bands, what can be acted on",
        description="The latest CRM audit `crm_audit` stored (ops.db), or, when none is "
        "stored yet, the same numbers computed now from the stores; the output says which. "
        "Read-only.",
    )
    audit.add_argument("--json", action="store_true", help="print JSON for machines")
    audit.set_defaults(run=_audit)

    mcp = commands.add_parser(
        "mcp",
        help="serve the memory to assistants over MCP (read-only)",
        description="An MCP server over the stores, read-only by construction: recall, page,"
        " source_note, timeline, dossier, similar, stale, brief and audit as tools, the"
        " recall pages as recall:// resources, and the read-side rule as a prompt. Over"
        " stdio (the assistant starts it), or with --http over streamable HTTP on"
        " 127.0.0.1 only, where every request must carry Authorization: Bearer"
        " $COMPANY_AI_MCP_TOKEN. See docs/mcp.md.",
    )
    mcp.add_argument(
        "--http", action="store_true", help="streamable HTTP on 127.0.0.1 instead of stdio"
    )
    mcp.add_argument("--port", type=_whole(1, 65535), help="the HTTP port (default 8765)")
    mcp.set_defaults(run=_mcp)

    demo = commands.add_parser("demo", help="fresh sample data, every asset run through Dagster")
    demo.add_argument(
        "--dir",
        type=Path,
        default=Path("demo"),
        help="where the demo keeps data/ and dagster_home/ (default: ./demo)",
    )
    demo.add_argument("--contacts", type=_whole(1), default=2000, help="at least 1")
    demo.add_argument(
        "--days",
        type=_whole(1, MAX_DAYS),
        default=3,
        help=f"how many recent days to run, 1 to {MAX_DAYS} (default 3); more until"
        " every job has played once",
    )
    demo.set_defaults(run=_demo)
    return parser


def _timeline(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.crm import load_timeline, render_text

    timeline = load_timeline(stores, args.email)
    if args.json:
        _out_json(json.dumps(timeline.to_json(), ensure_ascii=False, indent=2))
    else:
        _out(render_text(timeline, bodies=args.bodies))
    return 0


def _dossier(stores: Stores, args: argparse.Namespace) -> int:
    _out(load_dossier(stores, args.email))
    return 0


def _note(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.memory import append_episodes
    from company_ai.core.times import to_iso, utc_now

    with stores.connect(Store.CRM, readonly=True) as crm:
        contact = find_contact(crm, args.email)
    now = to_iso(utc_now())
    with stores.connect(Store.MEMORY) as memory:
        result = append_episodes(
            memory,
            [
                {
                    "contact_id": contact["id"],
                    "episode_type": "note",
                    "content": args.text,
                    "source": "manual",
                    "confidence": 1.0,
                    "created_at": now,
                }
            ],
            now=now,
            tz=args.settings.timezone,
        )
    state = "noted" if result.inserted else "already noted (same note, same second)"
    _out(f"{state}: {contact['name']} <{contact['email']}>, {now}")
    return 0


def _gate(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.gate import explain, judge
    from company_ai.core.outreach.day import own

    if not args.sources:
        raise CliError("give at least one --source FILE")
    text = sys.stdin.read() if str(args.textfile) == "-" else _read_text(args.textfile)
    sources = [_read_text(p) for p in args.sources]
    # As outreach judges: the company's own links and numbers are the settings' (Sender).
    verdict = judge({"text": text}, sources, args.allow, together=True, own=own(args.settings))
    found = explain(text, [claim for _, claim in verdict.claims])
    name = "stdin" if str(args.textfile) == "-" else str(args.textfile)
    if args.json:
        rows = [{k: v for k, v in e.to_json().items() if k != "field"} for e in found]
        _out_json(json.dumps(rows, ensure_ascii=False, indent=2))
    elif not found:
        _out(f"{name}: every claim is supported by {_count(len(sources), 'source')}")
    else:
        _out(f"{name}: {_count(len(found), 'claim')} no source supports")
        for e in found:
            where = f"characters {e.claim.start}–{e.claim.end}"
            _out(f"- {e.sentence}\n  {e.claim.kind}: {e.reason} ({where})")
    return 2 if found else 0


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CliError(f"no such file: {path}") from None
    except UnicodeDecodeError:
        raise CliError(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}{'es' if noun.endswith('s') else 's'}"


def _import(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.crm import import_contacts_csv
    from company_ai.core.times import to_iso, utc_now

    with stores.connect(Store.CRM) as crm:
        report = import_contacts_csv(crm, args.csvfile, to_iso(utc_now()))
    for error in report.errors:
        print(escape_controls(f"company-ai: {args.csvfile}: {error}"), file=sys.stderr)
    counts, bad = report.counts, len(report.errors)
    conflicts = (
        f"; {_count(counts.conflicts, 'address')} kept by the contact that already had it"
        if counts.conflicts
        else ""
    )
    if counts.forgotten:
        conflicts += f"; {_count(counts.forgotten, 'row')} of forgotten people skipped"
    _out(
        f"{args.csvfile}: {counts.inserted} new, {counts.updated} updated, {counts.unchanged}"
        f" unchanged contacts; {_count(bad, 'bad row')} not imported{conflicts}"
    )
    if report.errors:
        print(
            "company-ai: fix the rows above and run the import again: "
            "the rows already imported are not duplicated",
            file=sys.stderr,
        )
        return 1
    return 0


def _vectors_scrub(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.vectors.scrub import scrub_files

    done = scrub_files(args.path.expanduser().resolve())
    _out(
        f"cleared: {done['zeroed']} deleted embeddings zeroed, {done['log_rows']} log rows "
        f"removed, {done['folders']} folders of deleted collections removed; vacuumed"
    )
    return 0


def _forget(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.crm import Tombstones
    from company_ai.core.ops import find_returned, forget
    from company_ai.core.times import to_iso, utc_now

    if bool(args.email) == args.reapply:
        raise CliError("give one EMAIL, or --reapply")
    emails = (
        find_returned(stores, Tombstones.load(stores.data_dir)) if args.reapply else [args.email]
    )
    if not emails:
        _out("no forgotten person is in the CRM again; nothing to do")
    notes: list[str] = []
    done = []
    for email in emails:
        result = forget(stores, email, now=to_iso(utc_now()), log=notes.append)
        done.append(result)
        if args.json:
            _out_json(json.dumps({
                "removed": result.removed, "vault_notes": result.vault_notes,
                "already_forgotten": result.already,
            }))  # fmt: skip
        elif result.already:
            _out(f"{email} was forgotten before; nothing left to remove")
        else:
            state = "finished an interrupted forget: " if result.resumed else "forgotten: "
            _out(state + result.summary())
    if stores.chroma_url and any(not r.already for r in done):
        from company_ai.core.vectors.server import shown

        notes.append(
            f"the Chroma server at {shown(stores.chroma_url)} no longer has their vectors, but "
            "its files keep the deleted bytes until `company-ai vectors-scrub PATH` is run on "
            "its host with the server stopped (docs/operations.md)"
        )
    for note in notes:
        print(escape_controls(f"company-ai: {note}"), file=sys.stderr)
    if any(not r.already for r in done):
        print(
            "company-ai: snapshots taken before now (data/snapshots/) still hold them: they"
            " are backups; the next snapshot will not",
            file=sys.stderr,
        )
    return 0


def _connect_google(stores: Stores, args: argparse.Namespace) -> int:
    from google_auth_oauthlib.flow import InstalledAppFlow

    from company_ai.core.files import write_atomic

    if not args.client_secrets.is_file():
        raise CliError(f"no such file: {args.client_secrets}")
    scopes = [GOOGLE_SCOPES[s] for s in dict.fromkeys(args.scopes or ["contacts"])]
    flow = InstalledAppFlow.from_client_secrets_file(str(args.client_secrets), scopes)
    credentials = flow.run_local_server(port=0, open_browser=True)
    # The token is a secret: write_atomic's temporary file is made 0600 (mkstemp) and the
    # rename keeps that, so no one else can read it at any moment. It is never printed.
    write_atomic(args.out, credentials.to_json().encode("utf-8"))
    print(
        f"wrote {args.out} (readable by you only). Set COMPANY_AI_GOOGLE_PEOPLE_TOKEN to its"
        ' content, e.g. export COMPANY_AI_GOOGLE_PEOPLE_TOKEN="$(cat '
        f'{args.out})", and COMPANY_AI_CONTACTS=google'
    )
    return 0


def _sample(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.times import utc_now
    from company_ai.sample_world.crm import load_sample

    summary = load_sample(
        stores,
        as_of=utc_now(),
        contacts=args.contacts,
        density=args.density,
        seed=args.seed,
        tz=args.settings.timezone,
        progress=progress("loading sample"),
    )
    print(
        f"loaded {summary.contacts} contacts ({summary.with_email} with email), "
        f"{summary.episodes} episodes, {summary.messages} messages into {stores.data_dir}"
    )
    return 0


def _recall(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.recall import answer_json, ask, render_answer
    from company_ai.core.times import utc_now

    answer = ask(
        stores,
        args.question,
        now=utc_now(),
        max_age_days=args.settings.recall_stale_days,
        ollama_host=args.settings.ollama_host,
        limit=args.limit,
    )
    if args.json:
        _out_json(answer_json(answer))
    else:
        _out(render_answer(answer))
    return 0


def _searcher(conn, settings: Settings):
    from company_ai.core.recall import open_searcher

    return open_searcher(conn, settings.ollama_host)


def _page(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.recall import page_markdown

    with stores.connect(Store.RECALL, readonly=True) as conn:
        try:
            _out(page_markdown(conn, args.title), end="")
        except LookupError as exc:
            raise CliError(str(exc)) from None
    return 0


def _stale(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.recall import stale_pages
    from company_ai.core.times import utc_now

    days = args.settings.recall_stale_days
    with stores.connect(Store.RECALL, readonly=True) as conn:
        pages = stale_pages(conn, utc_now(), days)
    for page in pages:
        _out(f"{page.title}: note untouched for {page.age_days} days ({page.derived_from})")
        for category, text in page.observations:
            _out(f"  - [{category}] {text}")
    print(f"{len(pages)} stale pages (status or goal from notes untouched over {days} days)")
    return 0


def _similar(stores: Stores, args: argparse.Namespace) -> int:
    from dataclasses import replace

    from company_ai.core.vectors.similar import EmptyStore, Filters, find_similar, render

    filters = Filters(type_=args.type_, since=args.since, until=args.until)
    filters.check()  # a bad filter is refused before the CRM is read
    if args.contact:
        with stores.connect(Store.CRM, readonly=True) as crm:
            filters = replace(filters, contact_id=find_contact(crm, args.contact)["id"])
    try:
        result = find_similar(
            stores,
            args.text,
            collections=(args.collection,) if args.collection else None,
            filters=filters,
            limit=args.limit,
            ollama_host=args.settings.ollama_host,
        )
    except EmptyStore as exc:
        raise CliError(str(exc)) from None
    if args.json:
        _out_json(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
        return 0
    if result.note:
        print(f"company-ai: note: {result.note}", file=sys.stderr)
    _out(render(result))
    return 0


def _eval_retrieval(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.recall import evaluate_beir, evaluate_recall, render
    from company_ai.resources.embedder import Embedder

    if args.dir is None:
        with stores.connect(Store.RECALL, readonly=True) as conn:
            results = evaluate_recall(conn, _searcher(conn, args.settings).embedder)
    else:
        report = progress("embedding", unit="documents")
        try:
            embedder = Embedder(
                backend=args.settings.embedder_backend, host=args.settings.ollama_host
            ).embedder  # the configured model, as the night's index would use
            results = evaluate_beir(args.dir, embedder, progress=report)
        except FileNotFoundError as exc:
            raise CliError(str(exc)) from None
    if args.json:
        _out_json(json.dumps(results, indent=2))
    else:
        _out(render(results))
    return 0


def _audit(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.ops import audit_report
    from company_ai.core.times import to_iso, utc_now

    report = audit_report(stores, to_iso(utc_now()))
    if args.json:
        _out_json(json.dumps(report.to_json(), indent=2))
    else:
        _out("\n".join([report.heading(), *(f"  {line}" for line in report.audit.lines())]))
    return 0


def _mcp(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.core.store import ReadOnlyStores

    # One query vector at a time: BLAS threads only fight the embedder's for the cores
    # (recall's p50 fell from 43 to 14 ms on a busy 2-core box). Set before numpy loads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from company_ai.mcp_server import DEFAULT_PORT, ServerConfigError, serve

    if args.port is not None and not args.http:
        raise CliError("--port is for --http only")
    readonly = ReadOnlyStores(
        stores.data_dir, stores.busy_timeout_ms, stores.database_url, stores.chroma_url
    )
    try:
        serve(readonly, args.settings, http=args.http, port=args.port or DEFAULT_PORT)
    except ServerConfigError as exc:
        raise CliError(str(exc)) from None
    except KeyboardInterrupt:
        pass
    return 0


def _demo(stores: Stores, args: argparse.Namespace) -> int:
    from company_ai.demo import run_demo

    return run_demo(args.dir, contacts=args.contacts, days=args.days)


if __name__ == "__main__":
    sys.exit(main())
