"""rewardsmith.reward_models: outcome and process reward models — arrives with the reward-model issue."""
