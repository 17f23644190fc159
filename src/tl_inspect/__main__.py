from tl_inspect.cli import main

raise SystemExit(main())
