"""Generators of ST03N exports as SAP writes them (the layouts docs/imports.md lists), small
and written from the formats, so tests can compute the expected figures themselves."""

from __future__ import annotations

from dataclasses import dataclass, field

# Headings as ST03N writes them, English and German (field -> heading).
HEADINGS = {
    "en": {
        "task": "Task Type Name",
        "tx": "Report or Transaction Name",
        "hour": "Time",
        "steps": "# Steps",
        "total_response": "T Response Time (s)",
        "response": "Ø Time (ms)",
        "cpu": "Ø CPU Time (ms)",
        "db": "Ø DB Time (ms)",
        "db_per_request": "Ø Time/DB Req. (ms)",
        "wait": "Ø Wait Time (ms)",
        "roll_wait": "Ø Roll Wait Time (ms)",
        "memory": "Ø Extended Memory (KB)",
        "total": "Total",
    },
    "de": {
        "task": "Tasktypname",
        "tx": "Report oder Transaktionsname",
        "hour": "Uhrzeit",
        "steps": "# Dialogschritte",
        "total_response": "Σ Antwortzeit (s)",
        "response": "Ø Antwortzeit (ms)",
        "cpu": "Ø CPU-Zeit (ms)",
        "db": "Ø DB-Zeit (ms)",
        "db_per_request": "Ø Zeit/DB-Anf. (ms)",
        "wait": "Ø Wartezeit (ms)",
        "roll_wait": "Ø Rollwartezeit (ms)",
        "memory": "Ø Erweiterter Speicher (KB)",
        "total": "Summe",
    },
}


def number(value: float, decimals: int, style: str) -> str:
    """A number as SAP prints it: 1,743,000.0 (point) or 1.743.000,0 (comma)."""
    text = f"{value:,.{decimals}f}"
    if style == "comma":
        text = text.replace(",", "_").replace(".", ",").replace("_", ".")
    return text


@dataclass
class Export:
    """Rows of (key cells, {field: value}); written in one of SAP's download formats."""

    keys: list[str]  # heading keys of the text columns: task, tx, hour
    fields: list[str]  # heading keys of the numeric columns, in order
    rows: list[tuple[list[str], dict[str, float]]]
    decimals: dict[str, int] = field(default_factory=dict)  # per field; steps 0
    preamble: list[str] = field(default_factory=list)
    language: str = "en"
    style: str = "point"  # the decimal notation
    total: dict[str, float] | None = None  # a Total row's values (None: no Total row)

    def headings(self) -> list[str]:
        names = HEADINGS[self.language]
        return [names[k] for k in self.keys] + [names[f] for f in self.fields]

    def cells(self) -> list[list[str]]:
        out = []
        rows = list(self.rows)
        if self.total is not None:
            label = HEADINGS[self.language]["total"]
            rows.append(([label] + [""] * (len(self.keys) - 1), self.total))
        for keys, values in rows:
            out.append(
                keys
                + [
                    number(values[f], self.decimals.get(f, 0 if f == "steps" else 1), self.style)
                    if f in values
                    else ""
                    for f in self.fields
                ]
            )
        return out

    def text(self, fmt: str) -> str:
        """'tabs' (Text with Tabs), 'spreadsheet' (;), 'csv' (,) or 'list' (unconverted)."""
        head, body = self.headings(), self.cells()
        lines = list(self.preamble) + ([""] if self.preamble else [])
        if fmt == "list":
            widths = [max(len(r[k]) for r in [head, *body]) for k in range(len(head))]

            def framed(cells: list[str]) -> str:
                return "|" + "|".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + "|"

            rule = "-" * (sum(widths) + len(widths) + 1)
            lines += [rule, framed(head), "|" + "+".join("-" * w for w in widths) + "|"]
            for k, row in enumerate(body):
                if k and k % 2 == 0:  # a page break: the list repeats its heading
                    lines += [rule, framed(head), rule]
                lines.append(framed(row))
            lines.append(rule)
        else:
            sep = {"tabs": "\t", "spreadsheet": ";", "csv": ","}[fmt]

            def quoted(cell: str) -> str:
                return f'"{cell}"' if sep in cell else cell

            lines += [sep.join(quoted(c) for c in row) for row in [head, *body]]
        return "\r\n".join(lines) + "\r\n"
