"""Agent rollouts as every reward reads them (docs/agents.md): :class:`Trajectory` and its parts, read from
chat messages in the OpenAI shape. Torch-free, like the rest of the verifier layer."""

from rewardsmith.verifiers.trajectory.messages import TrajectoryError, from_messages, to_messages
from rewardsmith.verifiers.trajectory.model import (
    CALL_STATUSES,
    STOP_REASONS,
    CallRecord,
    CallStatus,
    Message,
    StopReason,
    ToolCall,
    Trajectory,
)

__all__ = [
    "CALL_STATUSES",
    "STOP_REASONS",
    "CallRecord",
    "CallStatus",
    "Message",
    "StopReason",
    "ToolCall",
    "Trajectory",
    "TrajectoryError",
    "from_messages",
    "to_messages",
]
