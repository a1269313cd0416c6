"""``medrealmm release``: build a versioned release, gate it behind the DUA, withdraw cases."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated

import typer

from medrealmm.cli.app import app
from medrealmm.cli.common import RUN_PATH, console, result_console, user_errors

release_app = typer.Typer(
    help="Versioned releases: Parquet + images with a manifest, the DUA gate, and patient "
    "withdrawals listed in a public changelog.",
    no_args_is_help=True,
)
app.add_typer(release_app, name="release")

RegisterOption = Annotated[
    Path | None,
    typer.Option(
        "--withdrawals",
        help="Withdrawal register (JSONL). Default: withdrawals.jsonl beside the run store.",
    ),
]


@release_app.command("build")
def build(
    store: Annotated[Path, typer.Argument(help="Run folder (or its store.sqlite)." + RUN_PATH)],
    out: Annotated[Path, typer.Argument(help="Folder to write the release into.")],
    version: Annotated[str, typer.Option("--version", help="Release version, X.Y or X.Y.Z.")],
    name: Annotated[str, typer.Option("--name", help="Dataset name (fixes the canary).")] = (
        "medrealmm"
    ),
    title: Annotated[str, typer.Option("--title", help="Title in the card and citation.")] = (
        "MedRealMM-style benchmark"
    ),
    author: Annotated[
        list[str] | None, typer.Option("--author", help="Citation author; repeat for several.")
    ] = None,
    disclose: Annotated[
        list[str] | None,
        typer.Option(
            "--contamination-note",
            help="Known exposure of this content to model training; repeat for several.",
        ),
    ] = None,
    register: RegisterOption = None,
    dua: Annotated[
        Path | None,
        typer.Option(
            "--dua",
            help="The dataset's own Data Use Agreement (markdown), shipped as DUA.md; users "
            "accept it for this dataset name. Required except on the demo's run.",
        ),
    ] = None,
    allow_unreviewed: Annotated[
        bool,
        typer.Option(
            "--allow-unreviewed",
            help="Release cases not yet past both review passes or rubrics not yet approved "
            "by a physician; recorded in the manifest and the dataset card.",
        ),
    ] = False,
) -> None:
    """Write Parquet tables, images, dataset card, DUA, changelog, citation and manifest.

    Refused while a shipped consultation is not in corpus.final or a shipped rubric is not
    physician-approved, unless --allow-unreviewed.

    Only de-identified consultations (corpus.final, else corpus.deid, flagged as not
    review-approved) are released; every withdrawn case is left out with all its instances,
    rubrics and images. Building the same store and version twice gives identical files.
    """
    from medrealmm.release import ReleaseInfo, build_release
    from medrealmm.release.demo import run_dua
    from medrealmm.release.outputs import check_output
    from medrealmm.store import RunStore, existing_store

    with user_errors():
        store_path = existing_store(store)
        check_output(out, option="OUT", folder=True, stores=[store_path], replaces_release=True)
        with RunStore(store_path, create=False) as run:
            text = run_dua(run, dua)
        info = ReleaseInfo(
            name=name,
            version=version,
            title=title,
            authors=tuple(author or ["MedRealMM benchmark maintainers"]),
            contamination_disclosures=tuple(disclose or []),
            dua=text,
        )
        result = build_release(
            store_path, out, info, register=register, allow_unreviewed=allow_unreviewed
        )
    counts = result.manifest["counts"]
    result_console.print(f"[green]release {version} written[/green] to [bold]{out}[/bold]")
    result_console.print("  " + ", ".join(f"{k}: {v}" for k, v in counts.items()))
    if not result.manifest["review"]["complete"]:
        open_items = "; ".join(result.manifest["review"]["open"])
        console.print(f"[yellow]warning:[/yellow] released before review: {open_items}")


@release_app.command("withdraw")
def withdraw(
    case_id: Annotated[str, typer.Argument(help="Consultation id (or an instance id of it).")],
    reason: Annotated[
        str, typer.Option("--reason", help="Kept privately in the register, never published.")
    ],
    store: Annotated[
        Path, typer.Option("--store", help="Run folder (or its store.sqlite)." + RUN_PATH)
    ],
    when: Annotated[
        str | None, typer.Option("--date", help="Date of the request, YYYY-MM-DD (default today).")
    ] = None,
    register: RegisterOption = None,
) -> None:
    """Withdraw a case at a patient's request: every later release leaves it out.

    The next `release build` drops the consultation with all its instances, rubrics and
    images, and its CHANGELOG lists the case id and date, never who asked. Do not put the
    requester's identity in --reason.
    """
    from medrealmm.release import default_register, record_withdrawal
    from medrealmm.store import RunStore, existing_store

    with user_errors():
        day = date.fromisoformat(when) if when else datetime.now(UTC).date()
        with RunStore(existing_store(store), writer=True) as run:
            withdrawal = record_withdrawal(
                run, register or default_register(store), case_id, reason, day
            )
    result_console.print(
        f"case [bold]{withdrawal.case_id}[/bold] withdrawn as of {withdrawal.date}; "
        "rebuild the release to publish a version without it"
    )


@release_app.command("accept-dua")
def accept_dua(
    release: Annotated[Path, typer.Argument(help="Release folder whose DUA.md you accept.")],
    name: Annotated[str, typer.Option("--name", help="Your name, recorded with the acceptance.")],
    affiliation: Annotated[str, typer.Option("--affiliation", help="Your institution.")] = "",
    yes: Annotated[
        bool, typer.Option("--yes", help="Accept without showing the DUA and asking.")
    ] = False,
) -> None:
    """Read and accept a release's Data Use Agreement; the loader refuses a release until then.

    Records who accepted, when, for which dataset and which DUA text (by sha256) in a
    user-level file
    (~/.config/medrealmm/dua-acceptances.json, or $MEDREALMM_DUA_FILE).
    """
    from medrealmm.release.dua import acceptance_file, record_acceptance
    from medrealmm.release.loader import dua_path, read_manifest

    with user_errors():
        manifest = read_manifest(release)
        path = dua_path(release, manifest)
        if not yes:
            result_console.print(path.read_text(encoding="utf-8"))
            typer.confirm("Do you accept this Data Use Agreement?", abort=True)
        record_acceptance(
            path,
            name=name,
            dataset=str(manifest["name"]),
            affiliation=affiliation,
            release=f"{manifest['name']} {manifest['version']}",
        )
    result_console.print(f"[green]DUA accepted[/green]; recorded in {acceptance_file()}")


@release_app.command("verify")
def verify(
    release: Annotated[Path, typer.Argument(help="Release folder to check.")],
    key: Annotated[
        str | None,
        typer.Option(
            "--key",
            help="Also check the manifest's Ed25519 signature against this public key: "
            "'ed25519:BASE64' as the builder published it, or their .pub file.",
        ),
    ] = None,
) -> None:
    """Check every file of a release against the sha256 sums in its manifest (and, with
    --key, that the builder signed that manifest)."""
    from medrealmm.release import verify_release
    from medrealmm.release.signing import verify_signature

    with user_errors():
        manifest = verify_release(release) if key is None else verify_signature(release, key)
    signed = f"; signed by {key if key.startswith('ed25519:') else 'the given key'}" if key else ""
    if key is None and manifest.get("signing_key"):
        signed = f"; signed with {manifest['signing_key']}, not checked: pass --key (the builder's)"
    result_console.print(
        f"[green]ok[/green]: {len(manifest['files'])} files match the manifest "
        f"of {manifest['name']} {manifest['version']}{signed}"
    )


@release_app.command("keygen")
def keygen(
    path: Annotated[
        Path, typer.Argument(help="Private key file to create (the public key goes to PATH.pub).")
    ],
) -> None:
    """Make an Ed25519 key pair for `release sign` (no openssl needed). Keep the private key
    off shared disks; publish the .pub line where your users can check it."""
    from medrealmm.release.signing import generate_key

    with user_errors():
        public = generate_key(path)
    console.print(f"private key: {path} (owner-only); public key: {path}.pub\n{public}")


@release_app.command("sign")
def sign(
    release: Annotated[Path, typer.Argument(help="Release folder to sign.")],
    key: Annotated[Path, typer.Option("--key", help="Private key file (release keygen).")],
) -> None:
    """Sign a release's manifest with Ed25519: the public key goes into the dataset card and
    the manifest, the signature into manifest.json.sig. The release must match its manifest."""
    from medrealmm.release.signing import sign_release

    with user_errors():
        public = sign_release(release, key)
    console.print(f"[green]signed[/green] {release} with {public}")
