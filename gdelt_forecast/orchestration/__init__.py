"""Airflow's side: what the DAG files share (:mod:`.dags`), what their tasks run
(:mod:`.tasks`), the pools (:mod:`.pools`) and waiting for a DAG's run (:mod:`.runs`). The top
layer beside the command line: nothing of the package imports it."""
