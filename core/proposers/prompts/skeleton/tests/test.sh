#!/bin/bash
# The verifier: check the agent's result and write a reward between 0 and 1 in every case.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
