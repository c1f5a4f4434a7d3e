"""rewardsmith.adapters: the CLI and the glue to trainers and servers; all call the verifier registry."""
