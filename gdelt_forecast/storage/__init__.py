"""Where a data root's files live: a bucket (:mod:`.bucket`) and the working copy a stage runs
on (:mod:`.working_copy`), the leases on a bucket's objects (:mod:`.leases`) and the
partitions' locks (:mod:`.locks`). It stands on the ground only."""
