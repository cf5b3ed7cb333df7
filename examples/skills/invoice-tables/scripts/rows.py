"""Split the table rows of `pdftotext -layout` output into CSV, stopping at the totals."""
import csv
import re
import sys

writer = csv.writer(sys.stdout)
with open(sys.argv[1], encoding="utf-8") as text:
    for line in text:
        if line.strip().lower().startswith("total"):
            break
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 4:
            writer.writerow(cells)
