"""rewardsmith.sandbox: running untrusted code (Docker and local backends) — arrives with the code-rewards issue."""
