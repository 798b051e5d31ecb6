"""A whole month on the Airflow cluster with faults injected: its mirror (``mirror``), news web
(``news_web``), cluster (``cluster``, ``worker_hostname``), the run (``run``) and its audit
(``audit``)."""
