"""docs/dashboards.md: a small PNG of each dashboard as the browser test saw it (during the
db-bottleneck fault), and what each panel answers (its description in the builder).

`make dashboard-docs` runs the browser test (tests/integration/test_browser.py), which
saves full-size PNGs under tests/artifacts/dashboards/, then this module:
`python -m dashboards.docs [--shots DIR]` shrinks them into docs/dashboards/ and writes
the page. It refuses to write a page with a dashboard missing its screenshot.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PIL import Image

from dashboards.build import dashboards
from dashboards.model import Dashboard

REPO = Path(__file__).resolve().parents[1]
SHOTS = REPO / "tests" / "artifacts" / "dashboards"
OUT = REPO / "docs" / "dashboards"
PAGE = REPO / "docs" / "dashboards.md"
WIDTH = 960  # half of the 1920 px the test renders at: small, still legible

HEAD = """# The dashboards, as a NOC operator sees them

Screenshots taken by the browser test (`tests/integration/test_browser.py`: Debian's
Chromium at 1920 px wide, logged in through Grafana's login form) while a real-time run
holds the **db-bottleneck** fault: the DB request light is red, the other indicators green.
The fleet overview is the fleet's (`wlmon up --profile fleet`, seen through Thanos query by
`tests/integration/test_fleet_thanos.py`): three SIDs, PRD with too few work processes.
Rebuilt by one command, `make dashboard-docs` (about 5 minutes on 2 cores; it needs the
stack built by `wlmon stack install`). Click a picture for the full-size file.

"""


def shrink(src: Path, dst: Path, width: int = WIDTH) -> None:
    with Image.open(src) as img:
        height = round(img.height * width / img.width)
        small = img.convert("RGB").resize((width, height), Image.LANCZOS)
    dst.parent.mkdir(parents=True, exist_ok=True)
    # 256 colours are plenty for a dark UI and cut the file to about a third.
    small.quantize(256, dither=Image.Dither.NONE).save(dst, optimize=True)


def section(model: Dashboard, picture: str) -> str:
    lines = [f"## {model.title}", "", f"[![{model.title}]({picture})]({picture})", ""]
    lines += ["| panel | what it answers |", "|---|---|"]
    for panel in model.panels:
        answer = " ".join(panel.description.split()) or "—"
        lines.append(f"| {panel.title} | {answer.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def write(shots: Path, out: Path = OUT, page: Path = PAGE) -> list[str]:
    """The page and its pictures; the dashboards that have no screenshot (nothing written)."""
    models = dashboards()
    missing = [m.uid for m in models if not (shots / f"{m.uid}.png").is_file()]
    if missing:
        return missing
    parts = [HEAD]
    for model in models:
        name = f"{model.uid}.png"
        shrink(shots / name, out / name)
        parts.append(section(model, f"{out.name}/{name}"))
    page.write_text("\n".join(parts))
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dashboards.docs", description=__doc__)
    parser.add_argument("--shots", type=Path, default=SHOTS, help="the browser test's PNGs")
    args = parser.parse_args(argv)
    missing = write(args.shots)
    if missing:
        print(
            f"error: no screenshot of {', '.join(missing)} in {args.shots}; "
            "run the browser test first (make dashboard-docs)",
            file=sys.stderr,
        )
        return 1
    print(f"wrote {PAGE.relative_to(REPO)} and {OUT.relative_to(REPO)}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
