"""Run robot-md 1.10.6 (the reference) on one manifest file: its validate and render results.

Run in its own process with the reference's --target directory on PYTHONPATH:
the reference needs mcp<2 and ships a `robot-md-mcp` script of its own, so it
never shares an environment with us: reference_worker.py runs it.
"""

import traceback


def run(path: str) -> dict:
    from robot_md import parser, render, validate

    try:
        parsed = parser.parse_file(path)
    except parser.ParseError as e:
        return {"code": 1, "errors": [str(e)], "warnings": [], "summary": "", "render": None}
    except Exception as e:
        return {"crash": f"{type(e).__name__}: {e}", "where": traceback.format_exc(limit=-1)}
    try:
        result = validate.validate(parsed)
        fresh = parser.parse_file(path)
        # robot-md leaks its internal marker into the YAML; we deliberately do not.
        fresh.frontmatter.pop("_deprecations", None)
        rendered = render.render_yaml(fresh)
    except Exception as e:
        return {"crash": f"{type(e).__name__}: {e}", "where": traceback.format_exc(limit=-1)}
    return {
        "code": result.code,
        "errors": result.errors,
        "warnings": result.warnings,
        "summary": result.summary,
        "render": rendered,
    }
