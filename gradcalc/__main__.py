"""`python -m gradcalc`: the same command line as the `gradcalc` console script."""

from gradcalc.cli import run

if __name__ == "__main__":
    run()
