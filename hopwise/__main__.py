from hopwise.cli import main

raise SystemExit(main())
