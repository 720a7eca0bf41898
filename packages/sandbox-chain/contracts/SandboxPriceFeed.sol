// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

// A price feed for the sandbox chain that answers as Chainlink's
// AggregatorV3Interface does (written for the sandbox, not Chainlink's code):
// rounds numbered from 1, each with its answer and times, answeredInRound equal
// to the round. The deployer moves it: `setAnswer` starts a round now,
// `setRound` one with the times given (a stale round, a round from the past).
// The same contract serves as an L2 sequencer-uptime feed: answer 0 up, 1 down,
// startedAt when the status changed. Not for any real network.

contract SandboxPriceFeed {
    struct Round {
        int256 answer;
        uint256 startedAt;
        uint256 updatedAt;
    }

    uint8 public immutable decimals;
    string public description;
    address public immutable owner;
    uint80 private _latestRound;
    mapping(uint80 => Round) private _rounds;

    // Chainlink's aggregator events, so a watcher that follows them follows this.
    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);
    event NewRound(uint256 indexed roundId, address indexed startedBy, uint256 startedAt);

    constructor(uint8 decimals_, string memory description_, int256 initialAnswer) {
        decimals = decimals_;
        description = description_;
        owner = msg.sender;
        _newRound(initialAnswer, block.timestamp, block.timestamp);
    }

    function version() external pure returns (uint256) {
        return 1;
    }

    function setAnswer(int256 answer) external returns (uint80 roundId) {
        require(msg.sender == owner, "only the owner");
        return _newRound(answer, block.timestamp, block.timestamp);
    }

    function setRound(int256 answer, uint256 startedAt, uint256 updatedAt) external returns (uint80 roundId) {
        require(msg.sender == owner, "only the owner");
        return _newRound(answer, startedAt, updatedAt);
    }

    function getRoundData(uint80 roundId)
        external
        view
        returns (uint80, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        // Chainlink's aggregators refuse an unknown round with this reason.
        require(roundId != 0 && roundId <= _latestRound, "No data present");
        Round storage round = _rounds[roundId];
        return (roundId, round.answer, round.startedAt, round.updatedAt, roundId);
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        roundId = _latestRound;
        Round storage round = _rounds[roundId];
        return (roundId, round.answer, round.startedAt, round.updatedAt, roundId);
    }

    function _newRound(int256 answer, uint256 startedAt, uint256 updatedAt) private returns (uint80 roundId) {
        roundId = ++_latestRound;
        _rounds[roundId] = Round(answer, startedAt, updatedAt);
        emit NewRound(roundId, msg.sender, startedAt);
        emit AnswerUpdated(answer, roundId, updatedAt);
    }
}
