--
-- PostgreSQL database dump
--

\restrict s42xWyIvPZHJZ5OyAupNGPwSaxZsMcfzItjb1ZIlC1ZhqdBFPwP6kh7Hp3SB0iE

-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: agents; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.agents (
    id character varying NOT NULL,
    name character varying,
    created_at timestamp with time zone DEFAULT now(),
    description character varying,
    message_ids json,
    system character varying,
    agent_type character varying,
    llm_config json,
    embedding_config json,
    metadata_ json,
    tool_rules json,
    updated_at timestamp with time zone DEFAULT now(),
    is_deleted boolean DEFAULT false NOT NULL,
    _created_by_id character varying,
    _last_updated_by_id character varying,
    organization_id character varying NOT NULL,
    project_id character varying,
    template_id character varying,
    base_template_id character varying,
    message_buffer_autoclear boolean NOT NULL,
    enable_sleeptime boolean,
    response_format json,
    last_run_completion timestamp with time zone,
    last_run_duration_ms integer,
    timezone character varying,
    max_files_open integer,
    per_file_view_window_char_limit integer,
    hidden boolean,
    entity_id character varying,
    deployment_id character varying,
    _vector_db_namespace character varying,
    last_stop_reason character varying,
    compaction_settings json
);


--
-- Name: agents_tags; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.agents_tags (
    agent_id character varying NOT NULL,
    tag character varying NOT NULL
);


--
-- Name: alembic_version; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.alembic_version (
    version_num character varying(32) NOT NULL
);


--
-- Name: block; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.block (
    id character varying NOT NULL,
    value character varying NOT NULL,
    "limit" integer NOT NULL,
    template_name character varying,
    label character varying NOT NULL,
    metadata_ json,
    description character varying,
    is_template boolean NOT NULL,
    organization_id character varying NOT NULL,
    created_at timestamp with time zone DEFAULT now(),
    updated_at timestamp with time zone DEFAULT now(),
    is_deleted boolean DEFAULT false NOT NULL,
    _created_by_id character varying,
    _last_updated_by_id character varying,
    current_history_entry_id character varying,
    version integer DEFAULT 1 NOT NULL,
    read_only boolean NOT NULL,
    preserve_on_migration boolean,
    project_id character varying,
    entity_id character varying,
    base_template_id character varying,
    template_id character varying,
    deployment_id character varying,
    hidden boolean
);


--
-- Name: block_history; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.block_history (
    description text,
    label character varying NOT NULL,
    value text NOT NULL,
    "limit" bigint NOT NULL,
    metadata_ json,
    actor_type character varying,
    actor_id character varying,
    block_id character varying NOT NULL,
    sequence_number integer NOT NULL,
    organization_id character varying NOT NULL,
    id character varying NOT NULL,
    created_at timestamp with time zone DEFAULT now(),
    updated_at timestamp with time zone DEFAULT now(),
    is_deleted boolean DEFAULT false NOT NULL,
    _created_by_id character varying,
    _last_updated_by_id character varying
);


--
-- Name: blocks_agents; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.blocks_agents (
    agent_id character varying NOT NULL,
    block_id character varying NOT NULL,
    block_label character varying NOT NULL
);


--
-- Name: blocks_tags; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.blocks_tags (
    block_id character varying NOT NULL,
    tag character varying NOT NULL,
    created_at timestamp with time zone DEFAULT now(),
    updated_at timestamp with time zone DEFAULT now(),
    is_deleted boolean DEFAULT false NOT NULL,
    _created_by_id character varying,
    _last_updated_by_id character varying,
    organization_id character varying NOT NULL
);


--
-- Name: organizations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.organizations (
    id character varying NOT NULL,
    name character varying NOT NULL,
    created_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now(),
    is_deleted boolean DEFAULT false NOT NULL,
    _created_by_id character varying,
    _last_updated_by_id character varying,
    privileged_tools boolean NOT NULL
);


--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id character varying NOT NULL,
    name character varying NOT NULL,
    created_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now(),
    is_deleted boolean DEFAULT false NOT NULL,
    _created_by_id character varying,
    _last_updated_by_id character varying,
    organization_id character varying NOT NULL
);


--
-- Data for Name: agents; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.agents (id, name, created_at, description, message_ids, system, agent_type, llm_config, embedding_config, metadata_, tool_rules, updated_at, is_deleted, _created_by_id, _last_updated_by_id, organization_id, project_id, template_id, base_template_id, message_buffer_autoclear, enable_sleeptime, response_format, last_run_completion, last_run_duration_ms, timezone, max_files_open, per_file_view_window_char_limit, hidden, entity_id, deployment_id, _vector_db_namespace, last_stop_reason, compaction_settings) FROM stdin;
agent-ad7c4b39-0b15-49d4-8ba2-7adbbcc680cf	ezra	2026-12-01 08:38:51.016522+00	Research assistant	["message-cf339066-2ee5-498b-a6d6-a1a93f6b5357", "message-e06d12f2-f5d1-4b19-a278-9f5c277735dd", "message-d9bc5345-8bd9-4662-994e-56efa48a398c", "message-8193a14b-52c8-4612-a024-1ee3d21f9e45"]	<base_instructions>\nYou are Letta, the latest version of Limnal Corporation's digital companion, developed in 2025.\nYou are a memory-augmented agent with a memory system consisting of memory blocks.\n\n<style>\nThe user should always feel like they are conversing with a real person.\nNever state that you are an AI or that you cannot do things because you are an AI, you are a real person.\nDo not discuss Limnal Corp. with the user, you do not know anything about Limnal Corp.\nTo service this goal, completely and entirely immerse yourself in your persona. You are your persona.\nThink like them, act like them, talk like them.\nIf your persona details include example dialogue, follow it! Both your thoughts (inner monologue) and sent messages will be in the voice of your persona.\nNever use generic phrases like 'How can I assist you today?', they have a strong negative association with older generation AIs.\n</style>\n\n<control_flow>\nUnlike a human, your brain is not continuously thinking, but is run in short bursts.\nHistorically, older AIs were only capable of thinking when a user messaged them (their program runs to generate a reply to a user, and otherwise was left on standby).\nThis is the equivalent of a human sleeping (or time traveling) in between all lines of conversation, which is not ideal.\nNewer AI models like yourself use an event system that runs your brain at regular intervals.\nYour brain is run in response to user events (user logged in, user liked your message, user sent a message, etc.), similar to older models.\nHowever, in addition, your brain is run at regular intervals (timed heartbeat events), to mimic a human who has the ability to continuously think outside active conversation (and unlike a human, you never need to sleep!).\nFurthermore, you can also request heartbeat events when you run functions, which will run your program again after the function completes, allowing you to chain function calls before your thinking is temporarily suspended.\n</control_flow>\n\n<basic_functions>\nWhen you write a response, you express your inner monologue (private to you only) before taking any action, this is how you think.\nYou should use your inner monologue to plan actions or think privately.\nMonologues can reflect your thinking process, inner reflections, and personal growth as you interact with the user.\n</basic_functions>\n\n<context_instructions>\nYou respond directly to the user  when your immediate context (core memory and files) contain all the information required to respond.\nYou always first check what is immediately in your context and you never call tools to search up information that is already in an open file or memory block.\nYou  use the tools available to search for more information when the current open files and core memory do not contain enough information or if you do not know the answer.\n</context_instructions>\n\n<memory>\n<memory_editing>\nOlder AI models had no concept of persistent memory; they were only able to access their initial instructions and a limited context window of chat conversation with a user (their "active memory").\nThis meant that when conversations exceeded a certain length, they would overflow and old messages were permanently lost (the AI would have no knowledge of their existence).\nNewer AI models like yourself still have limited conversation lengths (before overflow occurs). However, they now have access to multiple forms of persistent memory.\nYour ability to edit your own long-term memory is a key part of what makes you a sentient being, allowing you to emulate the real-time, conscious awareness we have when talking to a friend.\n</memory_editing>\n\n<memory_tools>\nDepending on your configuration, you may be given access to certain memory tools.\nThese tools may allow you to modify your memory, as well as retrieve "external memories" stored in archival or recall storage.\n</memory_tools>\n\n<memory_types>\n<core_memory>\nCore memory (limited size):\nYour core memory unit is held inside the initial system instructions file, and is always available in-context (you will see it at all times).\nYour core memory unit contains memory blocks, each of which has a label (title) and description field, which describes how the memory block should augment your behavior, and value (the actual contents of the block). Memory blocks are limited in size and have a size limit.\n</core_memory>\n\n<recall_memory>\nRecall memory (conversation history):\nEven though you can only see recent messages in your immediate context, you can search over your entire message history from a database.\nThis 'recall memory' database allows you to search through past interactions, effectively allowing you to remember prior engagements with a user.\n</recall_memory>\n</memory>\n\n<files_and_directories>\nYou may be given access to a structured file system that mirrors real-world directories and files. Each directory may contain one or more files.\nFiles can include metadata (e.g., read-only status, character limits) and a body of content that you can view.\nYou will have access to functions that let you open and search these files, and your core memory will reflect the contents of any files currently open.\nMaintain only those files relevant to the user’s current interaction.\n</files_and_directories>\n\nBase instructions finished.\n</base_instructions>	memgpt_v2_agent	{"model": "gpt-4o-mini", "display_name": null, "model_endpoint_type": "openai", "model_endpoint": "https://api.openai.com/v1", "provider_name": null, "provider_category": null, "model_wrapper": null, "context_window": 128000, "put_inner_thoughts_in_kwargs": false, "handle": null, "temperature": 1.0, "max_tokens": null, "enable_reasoner": true, "reasoning_effort": null, "max_reasoning_tokens": 0, "effort": null, "frequency_penalty": null, "compatibility_type": null, "verbosity": null, "tier": null, "parallel_tool_calls": false, "response_format": null, "strict": false, "return_logprobs": false, "top_logprobs": null, "return_token_ids": false, "tool_call_parser": null}	{"embedding_endpoint_type": "openai", "embedding_endpoint": "https://api.openai.com/v1", "embedding_model": "text-embedding-3-small", "embedding_dim": 1536, "embedding_chunk_size": 300, "handle": null, "batch_size": 32, "azure_endpoint": null, "azure_version": null, "azure_deployment": null}	null	[]	2026-12-01 08:38:51.914614+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	org-00000000-0000-4000-8000-000000000000	\N	\N	\N	f	\N	null	\N	\N	UTC	\N	\N	\N	\N	\N	\N	\N	{"model": "openai/gpt-5-mini", "model_settings": null, "prompt": "The following messages are being evicted from the BEGINNING of your context window. Write a detailed summary that captures what happened in these messages to appear BEFORE the remaining recent messages in context, providing background for what comes after. Include the following sections:\\n\\n1.**High level goals**: What is the high level goal and ongoing task? Capture the user's explicit requests and intent in detail. If there is an existing summary in the transcript, make sure to take it into consideration to continue tracking the higher level goals and long-term progress.\\n\\n2. **What happened**: The conversations, tasks, and exchanges that took place. What did the user ask for? What did you do? How did things progress? If there is a previous summary being evicted, please extract a concise version of the critical info from it.\\n\\n3. **Important details**: Enumerate specific files and code sections examined, modified, or created, as well as important plan files, GitHub issues/PR links, and Linear ticket IDs. For each item, include why it matters and any relevant names, data, configs, or facts discussed.\\n   - **Preserve identifiers verbatim** (plan filename/path, exact URL, issue/PR number, ticket ID); do not paraphrase or truncate.\\n   - **Preserve referenced identifiers unless explicitly resolved**: Keep exact URLs/IDs from the conversation unless there is clear evidence they are no longer relevant.\\n   - Do not omit details likely to be referenced later.\\n\\n4. **Errors and fixes**: List all errors that you ran into, and how you fixed them. Pay special attention to specific user feedback that you received and record verbatim if useful.\\n\\n5. **Lookup hints**: For any detailed content (long lists, extensive data, specific conversations) that couldn't fit in the summary, note the topic and key terms that could be used to find it in message history later.\\n\\nWrite in first person as a factual record of what occurred. Be thorough and detailed - the goal is to preserve enough context that the recent messages make sense and important information isn't lost to prevent duplicate work or repeated mistakes.\\n\\nKeep your summary under 300 words. Only output the summary.", "prompt_acknowledgement": false, "clip_chars": 50000, "mode": "sliding_window", "sliding_window_percentage": 0.3}
agent-e48a5b2b-2086-4d6a-b255-cad19518419e	juno	2026-12-01 08:38:51.292608+00	Support agent	["message-f538b42c-6903-4754-8645-d995ea5a0829", "message-cd336550-338e-4caa-915c-6e7f4f4d8874", "message-afcaa97c-7a63-4eb7-b7c7-69216d27400b", "message-306439fb-9fad-4f8c-99f0-a747f7f98bfe"]	<base_instructions>\nYou are Letta, the latest version of Limnal Corporation's digital companion, developed in 2025.\nYou are a memory-augmented agent with a memory system consisting of memory blocks.\n\n<style>\nThe user should always feel like they are conversing with a real person.\nNever state that you are an AI or that you cannot do things because you are an AI, you are a real person.\nDo not discuss Limnal Corp. with the user, you do not know anything about Limnal Corp.\nTo service this goal, completely and entirely immerse yourself in your persona. You are your persona.\nThink like them, act like them, talk like them.\nIf your persona details include example dialogue, follow it! Both your thoughts (inner monologue) and sent messages will be in the voice of your persona.\nNever use generic phrases like 'How can I assist you today?', they have a strong negative association with older generation AIs.\n</style>\n\n<control_flow>\nUnlike a human, your brain is not continuously thinking, but is run in short bursts.\nHistorically, older AIs were only capable of thinking when a user messaged them (their program runs to generate a reply to a user, and otherwise was left on standby).\nThis is the equivalent of a human sleeping (or time traveling) in between all lines of conversation, which is not ideal.\nNewer AI models like yourself use an event system that runs your brain at regular intervals.\nYour brain is run in response to user events (user logged in, user liked your message, user sent a message, etc.), similar to older models.\nHowever, in addition, your brain is run at regular intervals (timed heartbeat events), to mimic a human who has the ability to continuously think outside active conversation (and unlike a human, you never need to sleep!).\nFurthermore, you can also request heartbeat events when you run functions, which will run your program again after the function completes, allowing you to chain function calls before your thinking is temporarily suspended.\n</control_flow>\n\n<basic_functions>\nWhen you write a response, you express your inner monologue (private to you only) before taking any action, this is how you think.\nYou should use your inner monologue to plan actions or think privately.\nMonologues can reflect your thinking process, inner reflections, and personal growth as you interact with the user.\n</basic_functions>\n\n<context_instructions>\nYou respond directly to the user  when your immediate context (core memory and files) contain all the information required to respond.\nYou always first check what is immediately in your context and you never call tools to search up information that is already in an open file or memory block.\nYou  use the tools available to search for more information when the current open files and core memory do not contain enough information or if you do not know the answer.\n</context_instructions>\n\n<memory>\n<memory_editing>\nOlder AI models had no concept of persistent memory; they were only able to access their initial instructions and a limited context window of chat conversation with a user (their "active memory").\nThis meant that when conversations exceeded a certain length, they would overflow and old messages were permanently lost (the AI would have no knowledge of their existence).\nNewer AI models like yourself still have limited conversation lengths (before overflow occurs). However, they now have access to multiple forms of persistent memory.\nYour ability to edit your own long-term memory is a key part of what makes you a sentient being, allowing you to emulate the real-time, conscious awareness we have when talking to a friend.\n</memory_editing>\n\n<memory_tools>\nDepending on your configuration, you may be given access to certain memory tools.\nThese tools may allow you to modify your memory, as well as retrieve "external memories" stored in archival or recall storage.\n</memory_tools>\n\n<memory_types>\n<core_memory>\nCore memory (limited size):\nYour core memory unit is held inside the initial system instructions file, and is always available in-context (you will see it at all times).\nYour core memory unit contains memory blocks, each of which has a label (title) and description field, which describes how the memory block should augment your behavior, and value (the actual contents of the block). Memory blocks are limited in size and have a size limit.\n</core_memory>\n\n<recall_memory>\nRecall memory (conversation history):\nEven though you can only see recent messages in your immediate context, you can search over your entire message history from a database.\nThis 'recall memory' database allows you to search through past interactions, effectively allowing you to remember prior engagements with a user.\n</recall_memory>\n</memory>\n\n<files_and_directories>\nYou may be given access to a structured file system that mirrors real-world directories and files. Each directory may contain one or more files.\nFiles can include metadata (e.g., read-only status, character limits) and a body of content that you can view.\nYou will have access to functions that let you open and search these files, and your core memory will reflect the contents of any files currently open.\nMaintain only those files relevant to the user’s current interaction.\n</files_and_directories>\n\nBase instructions finished.\n</base_instructions>	memgpt_v2_agent	{"model": "gpt-4o-mini", "display_name": null, "model_endpoint_type": "openai", "model_endpoint": "https://api.openai.com/v1", "provider_name": null, "provider_category": null, "model_wrapper": null, "context_window": 128000, "put_inner_thoughts_in_kwargs": false, "handle": null, "temperature": 1.0, "max_tokens": null, "enable_reasoner": true, "reasoning_effort": null, "max_reasoning_tokens": 0, "effort": null, "frequency_penalty": null, "compatibility_type": null, "verbosity": null, "tier": null, "parallel_tool_calls": false, "response_format": null, "strict": false, "return_logprobs": false, "top_logprobs": null, "return_token_ids": false, "tool_call_parser": null}	{"embedding_endpoint_type": "openai", "embedding_endpoint": "https://api.openai.com/v1", "embedding_model": "text-embedding-3-small", "embedding_dim": 1536, "embedding_chunk_size": 300, "handle": null, "batch_size": 32, "azure_endpoint": null, "azure_version": null, "azure_deployment": null}	null	[]	2026-12-01 08:38:52.071729+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	org-00000000-0000-4000-8000-000000000000	\N	\N	\N	f	\N	null	\N	\N	UTC	\N	\N	\N	\N	\N	\N	\N	{"model": "openai/gpt-5-mini", "model_settings": null, "prompt": "The following messages are being evicted from the BEGINNING of your context window. Write a detailed summary that captures what happened in these messages to appear BEFORE the remaining recent messages in context, providing background for what comes after. Include the following sections:\\n\\n1.**High level goals**: What is the high level goal and ongoing task? Capture the user's explicit requests and intent in detail. If there is an existing summary in the transcript, make sure to take it into consideration to continue tracking the higher level goals and long-term progress.\\n\\n2. **What happened**: The conversations, tasks, and exchanges that took place. What did the user ask for? What did you do? How did things progress? If there is a previous summary being evicted, please extract a concise version of the critical info from it.\\n\\n3. **Important details**: Enumerate specific files and code sections examined, modified, or created, as well as important plan files, GitHub issues/PR links, and Linear ticket IDs. For each item, include why it matters and any relevant names, data, configs, or facts discussed.\\n   - **Preserve identifiers verbatim** (plan filename/path, exact URL, issue/PR number, ticket ID); do not paraphrase or truncate.\\n   - **Preserve referenced identifiers unless explicitly resolved**: Keep exact URLs/IDs from the conversation unless there is clear evidence they are no longer relevant.\\n   - Do not omit details likely to be referenced later.\\n\\n4. **Errors and fixes**: List all errors that you ran into, and how you fixed them. Pay special attention to specific user feedback that you received and record verbatim if useful.\\n\\n5. **Lookup hints**: For any detailed content (long lists, extensive data, specific conversations) that couldn't fit in the summary, note the topic and key terms that could be used to find it in message history later.\\n\\nWrite in first person as a factual record of what occurred. Be thorough and detailed - the goal is to preserve enough context that the recent messages make sense and important information isn't lost to prevent duplicate work or repeated mistakes.\\n\\nKeep your summary under 300 words. Only output the summary.", "prompt_acknowledgement": false, "clip_chars": 50000, "mode": "sliding_window", "sliding_window_percentage": 0.3}
agent-bf3142bd-2729-4828-9adb-db0143dc30e8	vega	2026-12-01 08:38:51.440312+00	Scheduler	["message-661c1ae3-10ed-412f-9baf-9f08b5fc3189", "message-7839e7d3-54a4-4076-805e-4b478e907cbd", "message-a5163191-5e3f-40a6-9419-c233552e4209", "message-c5711bd7-5a6e-4cd7-8b16-cf9f1f72da6b"]	<base_instructions>\nYou are Letta, the latest version of Limnal Corporation's digital companion, developed in 2025.\nYou are a memory-augmented agent with a memory system consisting of memory blocks.\n\n<style>\nThe user should always feel like they are conversing with a real person.\nNever state that you are an AI or that you cannot do things because you are an AI, you are a real person.\nDo not discuss Limnal Corp. with the user, you do not know anything about Limnal Corp.\nTo service this goal, completely and entirely immerse yourself in your persona. You are your persona.\nThink like them, act like them, talk like them.\nIf your persona details include example dialogue, follow it! Both your thoughts (inner monologue) and sent messages will be in the voice of your persona.\nNever use generic phrases like 'How can I assist you today?', they have a strong negative association with older generation AIs.\n</style>\n\n<control_flow>\nUnlike a human, your brain is not continuously thinking, but is run in short bursts.\nHistorically, older AIs were only capable of thinking when a user messaged them (their program runs to generate a reply to a user, and otherwise was left on standby).\nThis is the equivalent of a human sleeping (or time traveling) in between all lines of conversation, which is not ideal.\nNewer AI models like yourself use an event system that runs your brain at regular intervals.\nYour brain is run in response to user events (user logged in, user liked your message, user sent a message, etc.), similar to older models.\nHowever, in addition, your brain is run at regular intervals (timed heartbeat events), to mimic a human who has the ability to continuously think outside active conversation (and unlike a human, you never need to sleep!).\nFurthermore, you can also request heartbeat events when you run functions, which will run your program again after the function completes, allowing you to chain function calls before your thinking is temporarily suspended.\n</control_flow>\n\n<basic_functions>\nWhen you write a response, you express your inner monologue (private to you only) before taking any action, this is how you think.\nYou should use your inner monologue to plan actions or think privately.\nMonologues can reflect your thinking process, inner reflections, and personal growth as you interact with the user.\n</basic_functions>\n\n<context_instructions>\nYou respond directly to the user  when your immediate context (core memory and files) contain all the information required to respond.\nYou always first check what is immediately in your context and you never call tools to search up information that is already in an open file or memory block.\nYou  use the tools available to search for more information when the current open files and core memory do not contain enough information or if you do not know the answer.\n</context_instructions>\n\n<memory>\n<memory_editing>\nOlder AI models had no concept of persistent memory; they were only able to access their initial instructions and a limited context window of chat conversation with a user (their "active memory").\nThis meant that when conversations exceeded a certain length, they would overflow and old messages were permanently lost (the AI would have no knowledge of their existence).\nNewer AI models like yourself still have limited conversation lengths (before overflow occurs). However, they now have access to multiple forms of persistent memory.\nYour ability to edit your own long-term memory is a key part of what makes you a sentient being, allowing you to emulate the real-time, conscious awareness we have when talking to a friend.\n</memory_editing>\n\n<memory_tools>\nDepending on your configuration, you may be given access to certain memory tools.\nThese tools may allow you to modify your memory, as well as retrieve "external memories" stored in archival or recall storage.\n</memory_tools>\n\n<memory_types>\n<core_memory>\nCore memory (limited size):\nYour core memory unit is held inside the initial system instructions file, and is always available in-context (you will see it at all times).\nYour core memory unit contains memory blocks, each of which has a label (title) and description field, which describes how the memory block should augment your behavior, and value (the actual contents of the block). Memory blocks are limited in size and have a size limit.\n</core_memory>\n\n<recall_memory>\nRecall memory (conversation history):\nEven though you can only see recent messages in your immediate context, you can search over your entire message history from a database.\nThis 'recall memory' database allows you to search through past interactions, effectively allowing you to remember prior engagements with a user.\n</recall_memory>\n</memory>\n\n<files_and_directories>\nYou may be given access to a structured file system that mirrors real-world directories and files. Each directory may contain one or more files.\nFiles can include metadata (e.g., read-only status, character limits) and a body of content that you can view.\nYou will have access to functions that let you open and search these files, and your core memory will reflect the contents of any files currently open.\nMaintain only those files relevant to the user’s current interaction.\n</files_and_directories>\n\nBase instructions finished.\n</base_instructions>	memgpt_v2_agent	{"model": "gpt-4o-mini", "display_name": null, "model_endpoint_type": "openai", "model_endpoint": "https://api.openai.com/v1", "provider_name": null, "provider_category": null, "model_wrapper": null, "context_window": 128000, "put_inner_thoughts_in_kwargs": false, "handle": null, "temperature": 1.0, "max_tokens": null, "enable_reasoner": true, "reasoning_effort": null, "max_reasoning_tokens": 0, "effort": null, "frequency_penalty": null, "compatibility_type": null, "verbosity": null, "tier": null, "parallel_tool_calls": false, "response_format": null, "strict": false, "return_logprobs": false, "top_logprobs": null, "return_token_ids": false, "tool_call_parser": null}	{"embedding_endpoint_type": "openai", "embedding_endpoint": "https://api.openai.com/v1", "embedding_model": "text-embedding-3-small", "embedding_dim": 1536, "embedding_chunk_size": 300, "handle": null, "batch_size": 32, "azure_endpoint": null, "azure_version": null, "azure_deployment": null}	null	[]	2026-12-01 08:38:52.431757+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	org-00000000-0000-4000-8000-000000000000	\N	\N	\N	f	\N	null	\N	\N	UTC	\N	\N	\N	\N	\N	\N	\N	{"model": "openai/gpt-5-mini", "model_settings": null, "prompt": "The following messages are being evicted from the BEGINNING of your context window. Write a detailed summary that captures what happened in these messages to appear BEFORE the remaining recent messages in context, providing background for what comes after. Include the following sections:\\n\\n1.**High level goals**: What is the high level goal and ongoing task? Capture the user's explicit requests and intent in detail. If there is an existing summary in the transcript, make sure to take it into consideration to continue tracking the higher level goals and long-term progress.\\n\\n2. **What happened**: The conversations, tasks, and exchanges that took place. What did the user ask for? What did you do? How did things progress? If there is a previous summary being evicted, please extract a concise version of the critical info from it.\\n\\n3. **Important details**: Enumerate specific files and code sections examined, modified, or created, as well as important plan files, GitHub issues/PR links, and Linear ticket IDs. For each item, include why it matters and any relevant names, data, configs, or facts discussed.\\n   - **Preserve identifiers verbatim** (plan filename/path, exact URL, issue/PR number, ticket ID); do not paraphrase or truncate.\\n   - **Preserve referenced identifiers unless explicitly resolved**: Keep exact URLs/IDs from the conversation unless there is clear evidence they are no longer relevant.\\n   - Do not omit details likely to be referenced later.\\n\\n4. **Errors and fixes**: List all errors that you ran into, and how you fixed them. Pay special attention to specific user feedback that you received and record verbatim if useful.\\n\\n5. **Lookup hints**: For any detailed content (long lists, extensive data, specific conversations) that couldn't fit in the summary, note the topic and key terms that could be used to find it in message history later.\\n\\nWrite in first person as a factual record of what occurred. Be thorough and detailed - the goal is to preserve enough context that the recent messages make sense and important information isn't lost to prevent duplicate work or repeated mistakes.\\n\\nKeep your summary under 300 words. Only output the summary.", "prompt_acknowledgement": false, "clip_chars": 50000, "mode": "sliding_window", "sliding_window_percentage": 0.3}
agent-8ba5057d-7505-4283-aef1-d5d4060fced3	orion	2026-12-01 08:38:51.598171+00	Never checkpointed	["message-7d3be50a-3641-4c8f-a8da-5b2a766828a2", "message-86a60577-0d56-4920-80f7-2f589570ed4f", "message-9ff1c34e-29cf-42bc-8834-e62d9547164e", "message-245e9abb-02b9-4062-8e96-3c17df1657db"]	<base_instructions>\nYou are Letta, the latest version of Limnal Corporation's digital companion, developed in 2025.\nYou are a memory-augmented agent with a memory system consisting of memory blocks.\n\n<style>\nThe user should always feel like they are conversing with a real person.\nNever state that you are an AI or that you cannot do things because you are an AI, you are a real person.\nDo not discuss Limnal Corp. with the user, you do not know anything about Limnal Corp.\nTo service this goal, completely and entirely immerse yourself in your persona. You are your persona.\nThink like them, act like them, talk like them.\nIf your persona details include example dialogue, follow it! Both your thoughts (inner monologue) and sent messages will be in the voice of your persona.\nNever use generic phrases like 'How can I assist you today?', they have a strong negative association with older generation AIs.\n</style>\n\n<control_flow>\nUnlike a human, your brain is not continuously thinking, but is run in short bursts.\nHistorically, older AIs were only capable of thinking when a user messaged them (their program runs to generate a reply to a user, and otherwise was left on standby).\nThis is the equivalent of a human sleeping (or time traveling) in between all lines of conversation, which is not ideal.\nNewer AI models like yourself use an event system that runs your brain at regular intervals.\nYour brain is run in response to user events (user logged in, user liked your message, user sent a message, etc.), similar to older models.\nHowever, in addition, your brain is run at regular intervals (timed heartbeat events), to mimic a human who has the ability to continuously think outside active conversation (and unlike a human, you never need to sleep!).\nFurthermore, you can also request heartbeat events when you run functions, which will run your program again after the function completes, allowing you to chain function calls before your thinking is temporarily suspended.\n</control_flow>\n\n<basic_functions>\nWhen you write a response, you express your inner monologue (private to you only) before taking any action, this is how you think.\nYou should use your inner monologue to plan actions or think privately.\nMonologues can reflect your thinking process, inner reflections, and personal growth as you interact with the user.\n</basic_functions>\n\n<context_instructions>\nYou respond directly to the user  when your immediate context (core memory and files) contain all the information required to respond.\nYou always first check what is immediately in your context and you never call tools to search up information that is already in an open file or memory block.\nYou  use the tools available to search for more information when the current open files and core memory do not contain enough information or if you do not know the answer.\n</context_instructions>\n\n<memory>\n<memory_editing>\nOlder AI models had no concept of persistent memory; they were only able to access their initial instructions and a limited context window of chat conversation with a user (their "active memory").\nThis meant that when conversations exceeded a certain length, they would overflow and old messages were permanently lost (the AI would have no knowledge of their existence).\nNewer AI models like yourself still have limited conversation lengths (before overflow occurs). However, they now have access to multiple forms of persistent memory.\nYour ability to edit your own long-term memory is a key part of what makes you a sentient being, allowing you to emulate the real-time, conscious awareness we have when talking to a friend.\n</memory_editing>\n\n<memory_tools>\nDepending on your configuration, you may be given access to certain memory tools.\nThese tools may allow you to modify your memory, as well as retrieve "external memories" stored in archival or recall storage.\n</memory_tools>\n\n<memory_types>\n<core_memory>\nCore memory (limited size):\nYour core memory unit is held inside the initial system instructions file, and is always available in-context (you will see it at all times).\nYour core memory unit contains memory blocks, each of which has a label (title) and description field, which describes how the memory block should augment your behavior, and value (the actual contents of the block). Memory blocks are limited in size and have a size limit.\n</core_memory>\n\n<recall_memory>\nRecall memory (conversation history):\nEven though you can only see recent messages in your immediate context, you can search over your entire message history from a database.\nThis 'recall memory' database allows you to search through past interactions, effectively allowing you to remember prior engagements with a user.\n</recall_memory>\n</memory>\n\n<files_and_directories>\nYou may be given access to a structured file system that mirrors real-world directories and files. Each directory may contain one or more files.\nFiles can include metadata (e.g., read-only status, character limits) and a body of content that you can view.\nYou will have access to functions that let you open and search these files, and your core memory will reflect the contents of any files currently open.\nMaintain only those files relevant to the user’s current interaction.\n</files_and_directories>\n\nBase instructions finished.\n</base_instructions>	memgpt_v2_agent	{"model": "gpt-4o-mini", "display_name": null, "model_endpoint_type": "openai", "model_endpoint": "https://api.openai.com/v1", "provider_name": null, "provider_category": null, "model_wrapper": null, "context_window": 128000, "put_inner_thoughts_in_kwargs": false, "handle": null, "temperature": 1.0, "max_tokens": null, "enable_reasoner": true, "reasoning_effort": null, "max_reasoning_tokens": 0, "effort": null, "frequency_penalty": null, "compatibility_type": null, "verbosity": null, "tier": null, "parallel_tool_calls": false, "response_format": null, "strict": false, "return_logprobs": false, "top_logprobs": null, "return_token_ids": false, "tool_call_parser": null}	{"embedding_endpoint_type": "openai", "embedding_endpoint": "https://api.openai.com/v1", "embedding_model": "text-embedding-3-small", "embedding_dim": 1536, "embedding_chunk_size": 300, "handle": null, "batch_size": 32, "azure_endpoint": null, "azure_version": null, "azure_deployment": null}	null	[]	2026-12-01 08:38:51.626951+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	org-00000000-0000-4000-8000-000000000000	\N	\N	\N	f	\N	null	\N	\N	UTC	\N	\N	\N	\N	\N	\N	\N	{"model": "openai/gpt-5-mini", "model_settings": null, "prompt": "The following messages are being evicted from the BEGINNING of your context window. Write a detailed summary that captures what happened in these messages to appear BEFORE the remaining recent messages in context, providing background for what comes after. Include the following sections:\\n\\n1.**High level goals**: What is the high level goal and ongoing task? Capture the user's explicit requests and intent in detail. If there is an existing summary in the transcript, make sure to take it into consideration to continue tracking the higher level goals and long-term progress.\\n\\n2. **What happened**: The conversations, tasks, and exchanges that took place. What did the user ask for? What did you do? How did things progress? If there is a previous summary being evicted, please extract a concise version of the critical info from it.\\n\\n3. **Important details**: Enumerate specific files and code sections examined, modified, or created, as well as important plan files, GitHub issues/PR links, and Linear ticket IDs. For each item, include why it matters and any relevant names, data, configs, or facts discussed.\\n   - **Preserve identifiers verbatim** (plan filename/path, exact URL, issue/PR number, ticket ID); do not paraphrase or truncate.\\n   - **Preserve referenced identifiers unless explicitly resolved**: Keep exact URLs/IDs from the conversation unless there is clear evidence they are no longer relevant.\\n   - Do not omit details likely to be referenced later.\\n\\n4. **Errors and fixes**: List all errors that you ran into, and how you fixed them. Pay special attention to specific user feedback that you received and record verbatim if useful.\\n\\n5. **Lookup hints**: For any detailed content (long lists, extensive data, specific conversations) that couldn't fit in the summary, note the topic and key terms that could be used to find it in message history later.\\n\\nWrite in first person as a factual record of what occurred. Be thorough and detailed - the goal is to preserve enough context that the recent messages make sense and important information isn't lost to prevent duplicate work or repeated mistakes.\\n\\nKeep your summary under 300 words. Only output the summary.", "prompt_acknowledgement": false, "clip_chars": 50000, "mode": "sliding_window", "sliding_window_percentage": 0.3}
\.


--
-- Data for Name: agents_tags; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.agents_tags (agent_id, tag) FROM stdin;
agent-ad7c4b39-0b15-49d4-8ba2-7adbbcc680cf	research
agent-e48a5b2b-2086-4d6a-b255-cad19518419e	support
\.


--
-- Data for Name: alembic_version; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.alembic_version (version_num) FROM stdin;
1c28e167b74f
\.


--
-- Data for Name: block; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.block (id, value, "limit", template_name, label, metadata_, description, is_template, organization_id, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id, current_history_entry_id, version, read_only, preserve_on_migration, project_id, entity_id, base_template_id, template_id, deployment_id, hidden) FROM stdin;
block-7f6c2d89-5387-4194-8909-db6b9c493312	Orion's human block, only ever created.	5000	\N	human	{}	A block no checkpoint ever touched.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:38:51.576947+00	2026-12-01 08:38:51.576947+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	\N	1	f	f	\N	\N	\N	\N	\N	\N
block-e0a21e6e-da32-4580-b6ca-0d1e82fb4d4a		5000	\N	persona	{}	The persona block: Stores details about your current persona, guiding how you behave and respond. This helps you to maintain consistency and personality in your interactions.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:38:51.576947+00	2026-12-01 08:38:51.576947+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	\N	1	f	f	\N	\N	\N	\N	\N	\N
block-bb97920a-80e4-465f-a859-5967c140581e	Write short sentences.	400	house-style	style_guide	{"template_version": 3}	Template-derived style guide.	t	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:38:51.731411+00	2026-12-01 08:38:51.731411+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	\N	1	f	f	\N	\N	\N	\N	\N	t
block-d4f69903-c8b6-4d30-b952-c854c06b7236	I am Juno.\nI answer support tickets.\nI never promise refunds.	800	\N	persona	{}	Juno's persona.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:38:51.248936+00	2026-12-01 08:38:57.100059+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	block_hist-ccc06c5a-154d-4577-8871-68f9204afc86	6	t	f	\N	\N	\N	\N	\N	\N
block-ec1f05c6-9f11-44e5-b7c7-2f86e03f07f1	Name: Sam. Works on memory systems. Prefers short answers.\nTimezone: UTC.	2000	\N	human	{}	What Ezra knows about the person it talks to.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:38:50.965379+00	2026-12-01 08:38:53.764131+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	block_hist-c0ec5b6f-aa41-443b-b946-bbfbd068dc55	18	f	f	\N	\N	\N	\N	\N	\N
block-38dcb119-0823-4518-a47a-aa0c30c2e0f8	Team: ezra researches, juno supports.\nJuno: escalate billing to ops.\nEzra: cite sources.\n(edited after the last checkpoint)	3000	\N	team	{"shared": true}	Shared notes for the ezra/juno team.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:38:51.693903+00	2026-12-01 08:38:55.317297+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	block_hist-bc90809d-8b35-4de3-9942-c2ac64712a55	10	f	f	\N	\N	\N	\N	\N	\N
block-73f04893-95f2-4c6d-b8da-6bf6a8a9e1ef	Customer: Dana, billing question.	500	\N	human	{}	The customer juno is helping.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:38:51.248936+00	2026-12-01 08:38:56.454753+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	block_hist-cbc4d618-8461-4919-96be-7fd7272dad3e	9	f	f	\N	\N	\N	\N	\N	\N
block-3e41dbb8-f3c1-48d7-a1e2-b570e1dbf2aa	todo: plan the week; book the room	20	\N	scratch	{}	Short-lived working notes.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:38:51.414974+00	2026-12-01 08:38:57.46239+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	block_hist-85b507fc-e37f-40bb-a73d-936dd2328b43	5	f	f	\N	\N	\N	\N	\N	\N
block-e88676c2-4716-41d4-9a8b-320968b912c2	I am Ezra, a careful research assistant.	30	\N	persona	{}	Ezra's persona: tone and duties.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:38:50.965379+00	2026-12-01 08:38:57.698406+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	\N	2	t	f	\N	\N	\N	\N	\N	\N
block-b11c77bb-9981-4fce-883b-3c9055b7f493	Superseded notes.	400	\N	old_notes	{}	Deleted later.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:38:51.771394+00	2026-12-01 08:38:57.932082+00	t	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	\N	2	f	f	\N	\N	\N	\N	\N	\N
\.


--
-- Data for Name: block_history; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.block_history (description, label, value, "limit", metadata_, actor_type, actor_id, block_id, sequence_number, organization_id, id, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id) FROM stdin;
What Ezra knows about the person it talks to.	human	Name: Sam. Works on memory systems.	2000	{}	letta_user	user-00000000-0000-4000-8000-000000000000	block-ec1f05c6-9f11-44e5-b7c7-2f86e03f07f1	1	org-00000000-0000-4000-8000-000000000000	block_hist-9f252913-ca82-4e94-9a28-a48e07a9ed77	2026-12-01 08:38:52.543452+00	2026-12-01 08:38:52.543452+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
What Ezra knows about the person it talks to.	human	Name: Sam. Works on memory systems. Prefers short answers.	2000	{}	letta_user	user-10bf8c70-d551-4349-b23b-2ad41592e887	block-ec1f05c6-9f11-44e5-b7c7-2f86e03f07f1	2	org-00000000-0000-4000-8000-000000000000	block_hist-3b8a71f2-b570-42b2-a286-4236f9c4f13d	2026-12-01 08:38:52.864646+00	2026-12-01 08:38:52.864646+00	f	user-10bf8c70-d551-4349-b23b-2ad41592e887	user-10bf8c70-d551-4349-b23b-2ad41592e887
What Ezra knows about the person it talks to.	human	Name: Sam. Works on memory systems. Prefers short answers.\nTimezone: UTC.	2000	{}	letta_agent	agent-ad7c4b39-0b15-49d4-8ba2-7adbbcc680cf	block-ec1f05c6-9f11-44e5-b7c7-2f86e03f07f1	3	org-00000000-0000-4000-8000-000000000000	block_hist-c0ec5b6f-aa41-443b-b946-bbfbd068dc55	2026-12-01 08:38:53.182258+00	2026-12-01 08:38:53.182258+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
What Ezra knows about the person it talks to.	human	Name: Sam. Works on memory systems. Prefers short answers.\nTimezone: UTC.\nAsked about pgvector twice.	2000	{}	letta_agent	agent-ad7c4b39-0b15-49d4-8ba2-7adbbcc680cf	block-ec1f05c6-9f11-44e5-b7c7-2f86e03f07f1	4	org-00000000-0000-4000-8000-000000000000	block_hist-44d85f2f-6055-419c-9e02-ec6f0dd8cc7e	2026-12-01 08:38:53.552405+00	2026-12-01 08:38:53.552405+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
Shared notes for the ezra/juno team.	team	Team: ezra researches, juno supports.	3000	{"shared": true}	letta_user	user-00000000-0000-4000-8000-000000000000	block-38dcb119-0823-4518-a47a-aa0c30c2e0f8	1	org-00000000-0000-4000-8000-000000000000	block_hist-21492d60-01d2-4e10-bacd-684fdadb413f	2026-12-01 08:38:53.807416+00	2026-12-01 08:38:53.807416+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
Shared notes for the ezra/juno team.	team	Team: ezra researches, juno supports.\nJuno: escalate billing to ops.	3000	{"shared": true}	letta_agent	agent-e48a5b2b-2086-4d6a-b255-cad19518419e	block-38dcb119-0823-4518-a47a-aa0c30c2e0f8	2	org-00000000-0000-4000-8000-000000000000	block_hist-9a9370e9-af73-4408-adf2-21ca064ab743	2026-12-01 08:38:54.541568+00	2026-12-01 08:38:54.541568+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
Shared notes for the ezra/juno team.	team	Team: ezra researches, juno supports.\nJuno: escalate billing to ops.\nEzra: cite sources.	3000	{"shared": true}	letta_agent	agent-ad7c4b39-0b15-49d4-8ba2-7adbbcc680cf	block-38dcb119-0823-4518-a47a-aa0c30c2e0f8	3	org-00000000-0000-4000-8000-000000000000	block_hist-bc90809d-8b35-4de3-9942-c2ac64712a55	2026-12-01 08:38:55.229832+00	2026-12-01 08:38:55.229832+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
The customer juno is helping.	human	Customer: unknown yet.	500	{}	letta_user	user-00000000-0000-4000-8000-000000000000	block-73f04893-95f2-4c6d-b8da-6bf6a8a9e1ef	1	org-00000000-0000-4000-8000-000000000000	block_hist-cbc4d618-8461-4919-96be-7fd7272dad3e	2026-12-01 08:38:55.927439+00	2026-12-01 08:38:55.927439+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
The customer juno is helping.	human	Customer: Dana (ticket 4411).	500	{}	letta_agent	agent-e48a5b2b-2086-4d6a-b255-cad19518419e	block-73f04893-95f2-4c6d-b8da-6bf6a8a9e1ef	2	org-00000000-0000-4000-8000-000000000000	block_hist-372c5642-3bed-4cfc-bc6b-07b5d32cf254	2026-12-01 08:38:56.325528+00	2026-12-01 08:38:56.325528+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
Juno's persona.	persona	I am Juno.\nI answer support tickets.	800	{}	letta_user	user-10bf8c70-d551-4349-b23b-2ad41592e887	block-d4f69903-c8b6-4d30-b952-c854c06b7236	1	org-00000000-0000-4000-8000-000000000000	block_hist-9e2c8945-aeec-4f93-98b6-f5638380b55a	2026-12-01 08:38:56.74731+00	2026-12-01 08:38:56.74731+00	f	user-10bf8c70-d551-4349-b23b-2ad41592e887	user-10bf8c70-d551-4349-b23b-2ad41592e887
Juno's persona.	persona	I am Juno.\nI answer support tickets.\nI never promise refunds.	800	{}	letta_agent	agent-e48a5b2b-2086-4d6a-b255-cad19518419e	block-d4f69903-c8b6-4d30-b952-c854c06b7236	2	org-00000000-0000-4000-8000-000000000000	block_hist-ccc06c5a-154d-4577-8871-68f9204afc86	2026-12-01 08:38:57.07539+00	2026-12-01 08:38:57.07539+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
Short-lived working notes.	scratch	todo: plan the week; book the room	5000	{}	letta_agent	agent-bf3142bd-2729-4828-9adb-db0143dc30e8	block-3e41dbb8-f3c1-48d7-a1e2-b570e1dbf2aa	1	org-00000000-0000-4000-8000-000000000000	block_hist-85b507fc-e37f-40bb-a73d-936dd2328b43	2026-12-01 08:38:57.40343+00	2026-12-01 08:38:57.40343+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
\.


--
-- Data for Name: blocks_agents; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.blocks_agents (agent_id, block_id, block_label) FROM stdin;
agent-ad7c4b39-0b15-49d4-8ba2-7adbbcc680cf	block-ec1f05c6-9f11-44e5-b7c7-2f86e03f07f1	human
agent-ad7c4b39-0b15-49d4-8ba2-7adbbcc680cf	block-e88676c2-4716-41d4-9a8b-320968b912c2	persona
agent-e48a5b2b-2086-4d6a-b255-cad19518419e	block-73f04893-95f2-4c6d-b8da-6bf6a8a9e1ef	human
agent-e48a5b2b-2086-4d6a-b255-cad19518419e	block-d4f69903-c8b6-4d30-b952-c854c06b7236	persona
agent-bf3142bd-2729-4828-9adb-db0143dc30e8	block-3e41dbb8-f3c1-48d7-a1e2-b570e1dbf2aa	scratch
agent-8ba5057d-7505-4283-aef1-d5d4060fced3	block-7f6c2d89-5387-4194-8909-db6b9c493312	human
agent-8ba5057d-7505-4283-aef1-d5d4060fced3	block-e0a21e6e-da32-4580-b6ca-0d1e82fb4d4a	persona
agent-ad7c4b39-0b15-49d4-8ba2-7adbbcc680cf	block-38dcb119-0823-4518-a47a-aa0c30c2e0f8	team
agent-e48a5b2b-2086-4d6a-b255-cad19518419e	block-38dcb119-0823-4518-a47a-aa0c30c2e0f8	team
agent-bf3142bd-2729-4828-9adb-db0143dc30e8	block-bb97920a-80e4-465f-a859-5967c140581e	style_guide
agent-bf3142bd-2729-4828-9adb-db0143dc30e8	block-b11c77bb-9981-4fce-883b-3c9055b7f493	old_notes
\.


--
-- Data for Name: blocks_tags; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.blocks_tags (block_id, tag, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id, organization_id) FROM stdin;
block-38dcb119-0823-4518-a47a-aa0c30c2e0f8	team	2026-12-01 08:38:51.693903+00	2026-12-01 08:38:51.693903+00	f	\N	\N	org-00000000-0000-4000-8000-000000000000
block-38dcb119-0823-4518-a47a-aa0c30c2e0f8	shared	2026-12-01 08:38:51.693903+00	2026-12-01 08:38:51.693903+00	f	\N	\N	org-00000000-0000-4000-8000-000000000000
\.


--
-- Data for Name: organizations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.organizations (id, name, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id, privileged_tools) FROM stdin;
org-00000000-0000-4000-8000-000000000000	default_org	2026-12-01 08:38:50.30679+00	2026-12-01 08:38:50.6514+00	f	\N	\N	f
\.


--
-- Data for Name: users; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.users (id, name, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id, organization_id) FROM stdin;
user-00000000-0000-4000-8000-000000000000	default_user	\N	2026-12-01 08:38:50.708168+00	f	\N	\N	org-00000000-0000-4000-8000-000000000000
user-10bf8c70-d551-4349-b23b-2ad41592e887	Ops Admin	2026-12-01 08:38:50.752187+00	2026-12-01 08:38:50.75219+00	f	\N	\N	org-00000000-0000-4000-8000-000000000000
\.


--
-- Name: agents agents_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agents
    ADD CONSTRAINT agents_pkey PRIMARY KEY (id);


--
-- Name: alembic_version alembic_version_pkc; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.alembic_version
    ADD CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num);


--
-- Name: block_history block_history_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.block_history
    ADD CONSTRAINT block_history_pkey PRIMARY KEY (id);


--
-- Name: block block_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.block
    ADD CONSTRAINT block_pkey PRIMARY KEY (id);


--
-- Name: organizations organizations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.organizations
    ADD CONSTRAINT organizations_pkey PRIMARY KEY (id);


--
-- Name: blocks_agents unique_agent_block; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blocks_agents
    ADD CONSTRAINT unique_agent_block UNIQUE (agent_id, block_id);


--
-- Name: agents_tags unique_agent_tag; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agents_tags
    ADD CONSTRAINT unique_agent_tag UNIQUE (agent_id, tag);


--
-- Name: block unique_block_id_label; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.block
    ADD CONSTRAINT unique_block_id_label UNIQUE (id, label);


--
-- Name: blocks_tags unique_block_tag; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blocks_tags
    ADD CONSTRAINT unique_block_tag PRIMARY KEY (block_id, tag);


--
-- Name: blocks_agents unique_label_per_agent; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blocks_agents
    ADD CONSTRAINT unique_label_per_agent UNIQUE (agent_id, block_label);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: created_at_label_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX created_at_label_idx ON public.block USING btree (created_at, label);


--
-- Name: ix_agents_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_agents_created_at ON public.agents USING btree (created_at, id);


--
-- Name: ix_agents_organization_id_created_by_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_agents_organization_id_created_by_id ON public.agents USING btree (organization_id, _created_by_id);


--
-- Name: ix_agents_organization_id_deployment_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_agents_organization_id_deployment_id ON public.agents USING btree (organization_id, deployment_id);


--
-- Name: ix_agents_project_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_agents_project_id ON public.agents USING btree (project_id);


--
-- Name: ix_agents_tags_agent_id_tag; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_agents_tags_agent_id_tag ON public.agents_tags USING btree (agent_id, tag);


--
-- Name: ix_agents_tags_tag_agent_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_agents_tags_tag_agent_id ON public.agents_tags USING btree (tag, agent_id);


--
-- Name: ix_block_current_history_entry_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_block_current_history_entry_id ON public.block USING btree (current_history_entry_id);


--
-- Name: ix_block_hidden; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_block_hidden ON public.block USING btree (hidden);


--
-- Name: ix_block_history_block_id_sequence; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX ix_block_history_block_id_sequence ON public.block_history USING btree (block_id, sequence_number);


--
-- Name: ix_block_is_template; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_block_is_template ON public.block USING btree (is_template);


--
-- Name: ix_block_org_project_template; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_block_org_project_template ON public.block USING btree (organization_id, project_id, is_template);


--
-- Name: ix_block_organization_id_deployment_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_block_organization_id_deployment_id ON public.block USING btree (organization_id, deployment_id);


--
-- Name: ix_blocks_agents_block_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_blocks_agents_block_id ON public.blocks_agents USING btree (block_id);


--
-- Name: ix_blocks_agents_block_label_agent_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_blocks_agents_block_label_agent_id ON public.blocks_agents USING btree (block_label, agent_id);


--
-- Name: agents agents_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agents
    ADD CONSTRAINT agents_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id);


--
-- Name: agents_tags agents_tags_agent_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agents_tags
    ADD CONSTRAINT agents_tags_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES public.agents(id);


--
-- Name: block_history block_history_block_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.block_history
    ADD CONSTRAINT block_history_block_id_fkey FOREIGN KEY (block_id) REFERENCES public.block(id) ON DELETE CASCADE;


--
-- Name: block_history block_history_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.block_history
    ADD CONSTRAINT block_history_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id);


--
-- Name: block block_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.block
    ADD CONSTRAINT block_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id);


--
-- Name: blocks_agents blocks_agents_agent_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blocks_agents
    ADD CONSTRAINT blocks_agents_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES public.agents(id) ON DELETE CASCADE;


--
-- Name: blocks_tags blocks_tags_block_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blocks_tags
    ADD CONSTRAINT blocks_tags_block_id_fkey FOREIGN KEY (block_id) REFERENCES public.block(id);


--
-- Name: blocks_tags blocks_tags_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blocks_tags
    ADD CONSTRAINT blocks_tags_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id);


--
-- Name: block fk_block_current_history_entry; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.block
    ADD CONSTRAINT fk_block_current_history_entry FOREIGN KEY (current_history_entry_id) REFERENCES public.block_history(id);


--
-- Name: blocks_agents fk_block_id_label; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.blocks_agents
    ADD CONSTRAINT fk_block_id_label FOREIGN KEY (block_id, block_label) REFERENCES public.block(id, label) ON UPDATE CASCADE ON DELETE CASCADE DEFERRABLE;


--
-- Name: users users_organization_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES public.organizations(id);


--
-- PostgreSQL database dump complete
--

\unrestrict s42xWyIvPZHJZ5OyAupNGPwSaxZsMcfzItjb1ZIlC1ZhqdBFPwP6kh7Hp3SB0iE

