"""Several processes, one program (SPMD): the process group and device table, the collective-call check, and the transport that moves pieces between processes."""
