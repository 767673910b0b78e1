"""`python -m gradcalc`: the same command line as the `gradcalc` console script."""

from gradcalc.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
