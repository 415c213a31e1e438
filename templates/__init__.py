"""The Jinja templates of the sbatch scripts and the report, shipped as package data so that an
installed (non-editable) package finds them."""
from pathlib import Path

TEMPLATES_DIR = Path(__file__).resolve().parent
