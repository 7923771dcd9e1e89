import os

# The partitions start at the install date; the tests work on fixed days from 2025 on.
os.environ.setdefault("COMPANY_AI_START_DATE", "2025-01-01")
