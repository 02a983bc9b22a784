"""`python -m robot_md_mcp` for the installed package (the wheel carries the
module as robot_md_mcp/__init__.py)."""

from robot_md_mcp import main

raise SystemExit(main())
