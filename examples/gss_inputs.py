"""Write a uRR spec over the GSS joint categories and the respondents' items as a perturb input.

Run from a folder that has the data at ``../shared/data`` (or set ``LDPPLAN_DATA_DIR``)::

    python examples/gss_inputs.py            # writes gss-urr.json and gss-users.csv

X = ageGroup x educGroup x gender x nativeBorn (100 categories, 28,629 respondents);
X_S = the 20 categories without a high-school diploma (educGroup "<12 yrs").
"""
from __future__ import annotations

import csv
import json

from ldpplan.planner.data import default_data_dir, load_gss_vocab

gss = load_gss_vocab(default_data_dir() / "gss_vocab.csv")
labels, items = gss.joint_categories()
sensitive = [label for label in labels if label.split("|")[1] == "<12 yrs"]
with open("gss-urr.json", "w", encoding="utf-8") as fh:
    json.dump({"mechanism": "urr", "epsilon": 1.0, "domain": labels, "sensitive": sensitive, "users": len(items)}, fh)
with open("gss-users.csv", "w", newline="", encoding="utf-8") as fh:
    csv.writer(fh).writerows([["item"], *([labels[i]] for i in items)])
print(f"gss-urr.json: |X| = {len(labels)}, |X_S| = {len(sensitive)}; gss-users.csv: {len(items)} users")
