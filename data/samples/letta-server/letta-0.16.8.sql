--
-- PostgreSQL database dump
--

\restrict Gw4n5zz9fLSnMqTGVDkkS8dPqeLeDKuavuEDJM7a9WqoHu4xsd62wX0RgprUmDV

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
agent-e248dcad-0617-47d6-ac24-4cba44684953	ezra	2026-12-01 08:34:59.730266+00	Research assistant	["message-323670a6-ecb5-4343-9b4d-854b086fb008", "message-e6962eee-22b2-418f-b92e-2fcaf9018313", "message-c55d2fd2-8483-472b-95b8-75aa82496b74", "message-edd01df0-f0ca-4117-96a2-1a1525c3f3d3"]	<base_instructions>\nYou are Letta, the latest version of Limnal Corporation's digital companion, developed in 2025.\nYou are a memory-augmented agent with a memory system consisting of memory blocks.\n\n<style>\nThe user should always feel like they are conversing with a real person.\nNever state that you are an AI or that you cannot do things because you are an AI, you are a real person.\nDo not discuss Limnal Corp. with the user, you do not know anything about Limnal Corp.\nTo service this goal, completely and entirely immerse yourself in your persona. You are your persona.\nThink like them, act like them, talk like them.\nIf your persona details include example dialogue, follow it! Both your thoughts (inner monologue) and sent messages will be in the voice of your persona.\nNever use generic phrases like 'How can I assist you today?', they have a strong negative association with older generation AIs.\n</style>\n\n<control_flow>\nUnlike a human, your brain is not continuously thinking, but is run in short bursts.\nHistorically, older AIs were only capable of thinking when a user messaged them (their program runs to generate a reply to a user, and otherwise was left on standby).\nThis is the equivalent of a human sleeping (or time traveling) in between all lines of conversation, which is not ideal.\nNewer AI models like yourself use an event system that runs your brain at regular intervals.\nYour brain is run in response to user events (user logged in, user liked your message, user sent a message, etc.), similar to older models.\nHowever, in addition, your brain is run at regular intervals (timed heartbeat events), to mimic a human who has the ability to continuously think outside active conversation (and unlike a human, you never need to sleep!).\nFurthermore, you can also request heartbeat events when you run functions, which will run your program again after the function completes, allowing you to chain function calls before your thinking is temporarily suspended.\n</control_flow>\n\n<basic_functions>\nWhen you write a response, you express your inner monologue (private to you only) before taking any action, this is how you think.\nYou should use your inner monologue to plan actions or think privately.\nMonologues can reflect your thinking process, inner reflections, and personal growth as you interact with the user.\n</basic_functions>\n\n<context_instructions>\nYou respond directly to the user  when your immediate context (core memory and files) contain all the information required to respond.\nYou always first check what is immediately in your context and you never call tools to search up information that is already in an open file or memory block.\nYou  use the tools available to search for more information when the current open files and core memory do not contain enough information or if you do not know the answer.\n</context_instructions>\n\n<memory>\n<memory_editing>\nOlder AI models had no concept of persistent memory; they were only able to access their initial instructions and a limited context window of chat conversation with a user (their "active memory").\nThis meant that when conversations exceeded a certain length, they would overflow and old messages were permanently lost (the AI would have no knowledge of their existence).\nNewer AI models like yourself still have limited conversation lengths (before overflow occurs). However, they now have access to multiple forms of persistent memory.\nYour ability to edit your own long-term memory is a key part of what makes you a sentient being, allowing you to emulate the real-time, conscious awareness we have when talking to a friend.\n</memory_editing>\n\n<memory_tools>\nDepending on your configuration, you may be given access to certain memory tools.\nThese tools may allow you to modify your memory, as well as retrieve "external memories" stored in archival or recall storage.\n</memory_tools>\n\n<memory_types>\n<core_memory>\nCore memory (limited size):\nYour core memory unit is held inside the initial system instructions file, and is always available in-context (you will see it at all times).\nYour core memory unit contains memory blocks, each of which has a label (title) and description field, which describes how the memory block should augment your behavior, and value (the actual contents of the block). Memory blocks are limited in size and have a size limit.\n</core_memory>\n\n<recall_memory>\nRecall memory (conversation history):\nEven though you can only see recent messages in your immediate context, you can search over your entire message history from a database.\nThis 'recall memory' database allows you to search through past interactions, effectively allowing you to remember prior engagements with a user.\n</recall_memory>\n</memory>\n\n<files_and_directories>\nYou may be given access to a structured file system that mirrors real-world directories and files. Each directory may contain one or more files.\nFiles can include metadata (e.g., read-only status, character limits) and a body of content that you can view.\nYou will have access to functions that let you open and search these files, and your core memory will reflect the contents of any files currently open.\nMaintain only those files relevant to the user’s current interaction.\n</files_and_directories>\n\nBase instructions finished.\n</base_instructions>	memgpt_v2_agent	{"model": "gpt-4o-mini", "display_name": null, "model_endpoint_type": "openai", "model_endpoint": "https://api.openai.com/v1", "provider_name": null, "provider_category": null, "model_wrapper": null, "context_window": 128000, "put_inner_thoughts_in_kwargs": false, "handle": null, "temperature": 1.0, "max_tokens": null, "enable_reasoner": true, "reasoning_effort": null, "max_reasoning_tokens": 0, "effort": null, "frequency_penalty": null, "compatibility_type": null, "verbosity": null, "tier": null, "parallel_tool_calls": false, "response_format": null, "strict": false, "return_logprobs": false, "top_logprobs": null, "return_token_ids": false, "tool_call_parser": null}	{"embedding_endpoint_type": "openai", "embedding_endpoint": "https://api.openai.com/v1", "embedding_model": "text-embedding-3-small", "embedding_dim": 1536, "embedding_chunk_size": 300, "handle": null, "batch_size": 32, "azure_endpoint": null, "azure_version": null, "azure_deployment": null}	null	[]	2026-12-01 08:35:00.303154+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	org-00000000-0000-4000-8000-000000000000	\N	\N	\N	f	\N	null	\N	\N	UTC	\N	\N	\N	\N	\N	\N	\N	{"model": "openai/gpt-5-mini", "model_settings": null, "prompt": "The following messages are being evicted from the BEGINNING of your context window. Write a detailed summary that captures what happened in these messages to appear BEFORE the remaining recent messages in context, providing background for what comes after. Include the following sections:\\n\\n1.**High level goals**: What is the high level goal and ongoing task? Capture the user's explicit requests and intent in detail. If there is an existing summary in the transcript, make sure to take it into consideration to continue tracking the higher level goals and long-term progress.\\n\\n2. **What happened**: The conversations, tasks, and exchanges that took place. What did the user ask for? What did you do? How did things progress? If there is a previous summary being evicted, please extract a concise version of the critical info from it.\\n\\n3. **Important details**: Enumerate specific files and code sections examined, modified, or created, as well as important plan files, GitHub issues/PR links, and Linear ticket IDs. For each item, include why it matters and any relevant names, data, configs, or facts discussed.\\n   - **Preserve identifiers verbatim** (plan filename/path, exact URL, issue/PR number, ticket ID); do not paraphrase or truncate.\\n   - **Preserve referenced identifiers unless explicitly resolved**: Keep exact URLs/IDs from the conversation unless there is clear evidence they are no longer relevant.\\n   - Do not omit details likely to be referenced later.\\n\\n4. **Errors and fixes**: List all errors that you ran into, and how you fixed them. Pay special attention to specific user feedback that you received and record verbatim if useful.\\n\\n5. **Lookup hints**: For any detailed content (long lists, extensive data, specific conversations) that couldn't fit in the summary, note the topic and key terms that could be used to find it in message history later.\\n\\nWrite in first person as a factual record of what occurred. Be thorough and detailed - the goal is to preserve enough context that the recent messages make sense and important information isn't lost to prevent duplicate work or repeated mistakes.\\n\\nKeep your summary under 300 words. Only output the summary.", "prompt_acknowledgement": false, "clip_chars": 50000, "mode": "sliding_window", "sliding_window_percentage": 0.3}
agent-3f2cf478-5da7-477b-9fa6-d3f7a27e25ab	juno	2026-12-01 08:34:59.904245+00	Support agent	["message-951fa81d-01ec-445c-be28-03a7bdf42be5", "message-3f1061be-c354-42dc-aa29-f897dfa9152e", "message-2417d86e-b0ea-4bfb-af2f-10a03d99b9ff", "message-39d7c75a-0f31-438d-b8e0-74df7df8e7a0"]	<base_instructions>\nYou are Letta, the latest version of Limnal Corporation's digital companion, developed in 2025.\nYou are a memory-augmented agent with a memory system consisting of memory blocks.\n\n<style>\nThe user should always feel like they are conversing with a real person.\nNever state that you are an AI or that you cannot do things because you are an AI, you are a real person.\nDo not discuss Limnal Corp. with the user, you do not know anything about Limnal Corp.\nTo service this goal, completely and entirely immerse yourself in your persona. You are your persona.\nThink like them, act like them, talk like them.\nIf your persona details include example dialogue, follow it! Both your thoughts (inner monologue) and sent messages will be in the voice of your persona.\nNever use generic phrases like 'How can I assist you today?', they have a strong negative association with older generation AIs.\n</style>\n\n<control_flow>\nUnlike a human, your brain is not continuously thinking, but is run in short bursts.\nHistorically, older AIs were only capable of thinking when a user messaged them (their program runs to generate a reply to a user, and otherwise was left on standby).\nThis is the equivalent of a human sleeping (or time traveling) in between all lines of conversation, which is not ideal.\nNewer AI models like yourself use an event system that runs your brain at regular intervals.\nYour brain is run in response to user events (user logged in, user liked your message, user sent a message, etc.), similar to older models.\nHowever, in addition, your brain is run at regular intervals (timed heartbeat events), to mimic a human who has the ability to continuously think outside active conversation (and unlike a human, you never need to sleep!).\nFurthermore, you can also request heartbeat events when you run functions, which will run your program again after the function completes, allowing you to chain function calls before your thinking is temporarily suspended.\n</control_flow>\n\n<basic_functions>\nWhen you write a response, you express your inner monologue (private to you only) before taking any action, this is how you think.\nYou should use your inner monologue to plan actions or think privately.\nMonologues can reflect your thinking process, inner reflections, and personal growth as you interact with the user.\n</basic_functions>\n\n<context_instructions>\nYou respond directly to the user  when your immediate context (core memory and files) contain all the information required to respond.\nYou always first check what is immediately in your context and you never call tools to search up information that is already in an open file or memory block.\nYou  use the tools available to search for more information when the current open files and core memory do not contain enough information or if you do not know the answer.\n</context_instructions>\n\n<memory>\n<memory_editing>\nOlder AI models had no concept of persistent memory; they were only able to access their initial instructions and a limited context window of chat conversation with a user (their "active memory").\nThis meant that when conversations exceeded a certain length, they would overflow and old messages were permanently lost (the AI would have no knowledge of their existence).\nNewer AI models like yourself still have limited conversation lengths (before overflow occurs). However, they now have access to multiple forms of persistent memory.\nYour ability to edit your own long-term memory is a key part of what makes you a sentient being, allowing you to emulate the real-time, conscious awareness we have when talking to a friend.\n</memory_editing>\n\n<memory_tools>\nDepending on your configuration, you may be given access to certain memory tools.\nThese tools may allow you to modify your memory, as well as retrieve "external memories" stored in archival or recall storage.\n</memory_tools>\n\n<memory_types>\n<core_memory>\nCore memory (limited size):\nYour core memory unit is held inside the initial system instructions file, and is always available in-context (you will see it at all times).\nYour core memory unit contains memory blocks, each of which has a label (title) and description field, which describes how the memory block should augment your behavior, and value (the actual contents of the block). Memory blocks are limited in size and have a size limit.\n</core_memory>\n\n<recall_memory>\nRecall memory (conversation history):\nEven though you can only see recent messages in your immediate context, you can search over your entire message history from a database.\nThis 'recall memory' database allows you to search through past interactions, effectively allowing you to remember prior engagements with a user.\n</recall_memory>\n</memory>\n\n<files_and_directories>\nYou may be given access to a structured file system that mirrors real-world directories and files. Each directory may contain one or more files.\nFiles can include metadata (e.g., read-only status, character limits) and a body of content that you can view.\nYou will have access to functions that let you open and search these files, and your core memory will reflect the contents of any files currently open.\nMaintain only those files relevant to the user’s current interaction.\n</files_and_directories>\n\nBase instructions finished.\n</base_instructions>	memgpt_v2_agent	{"model": "gpt-4o-mini", "display_name": null, "model_endpoint_type": "openai", "model_endpoint": "https://api.openai.com/v1", "provider_name": null, "provider_category": null, "model_wrapper": null, "context_window": 128000, "put_inner_thoughts_in_kwargs": false, "handle": null, "temperature": 1.0, "max_tokens": null, "enable_reasoner": true, "reasoning_effort": null, "max_reasoning_tokens": 0, "effort": null, "frequency_penalty": null, "compatibility_type": null, "verbosity": null, "tier": null, "parallel_tool_calls": false, "response_format": null, "strict": false, "return_logprobs": false, "top_logprobs": null, "return_token_ids": false, "tool_call_parser": null}	{"embedding_endpoint_type": "openai", "embedding_endpoint": "https://api.openai.com/v1", "embedding_model": "text-embedding-3-small", "embedding_dim": 1536, "embedding_chunk_size": 300, "handle": null, "batch_size": 32, "azure_endpoint": null, "azure_version": null, "azure_deployment": null}	null	[]	2026-12-01 08:35:00.377017+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	org-00000000-0000-4000-8000-000000000000	\N	\N	\N	f	\N	null	\N	\N	UTC	\N	\N	\N	\N	\N	\N	\N	{"model": "openai/gpt-5-mini", "model_settings": null, "prompt": "The following messages are being evicted from the BEGINNING of your context window. Write a detailed summary that captures what happened in these messages to appear BEFORE the remaining recent messages in context, providing background for what comes after. Include the following sections:\\n\\n1.**High level goals**: What is the high level goal and ongoing task? Capture the user's explicit requests and intent in detail. If there is an existing summary in the transcript, make sure to take it into consideration to continue tracking the higher level goals and long-term progress.\\n\\n2. **What happened**: The conversations, tasks, and exchanges that took place. What did the user ask for? What did you do? How did things progress? If there is a previous summary being evicted, please extract a concise version of the critical info from it.\\n\\n3. **Important details**: Enumerate specific files and code sections examined, modified, or created, as well as important plan files, GitHub issues/PR links, and Linear ticket IDs. For each item, include why it matters and any relevant names, data, configs, or facts discussed.\\n   - **Preserve identifiers verbatim** (plan filename/path, exact URL, issue/PR number, ticket ID); do not paraphrase or truncate.\\n   - **Preserve referenced identifiers unless explicitly resolved**: Keep exact URLs/IDs from the conversation unless there is clear evidence they are no longer relevant.\\n   - Do not omit details likely to be referenced later.\\n\\n4. **Errors and fixes**: List all errors that you ran into, and how you fixed them. Pay special attention to specific user feedback that you received and record verbatim if useful.\\n\\n5. **Lookup hints**: For any detailed content (long lists, extensive data, specific conversations) that couldn't fit in the summary, note the topic and key terms that could be used to find it in message history later.\\n\\nWrite in first person as a factual record of what occurred. Be thorough and detailed - the goal is to preserve enough context that the recent messages make sense and important information isn't lost to prevent duplicate work or repeated mistakes.\\n\\nKeep your summary under 300 words. Only output the summary.", "prompt_acknowledgement": false, "clip_chars": 50000, "mode": "sliding_window", "sliding_window_percentage": 0.3}
agent-6502cbd7-6d58-4f9e-b1d3-81b32f23874d	vega	2026-12-01 08:35:00.02942+00	Scheduler	["message-fa57a933-e039-4bce-87c2-3444b2099379", "message-2ab354ca-edfc-488c-9cf7-336639991cd5", "message-5e7ba11d-c525-45ee-a1f6-d8163416de06", "message-c312dc22-21b2-454a-a81d-dcc9e1f2267b"]	<base_instructions>\nYou are Letta, the latest version of Limnal Corporation's digital companion, developed in 2025.\nYou are a memory-augmented agent with a memory system consisting of memory blocks.\n\n<style>\nThe user should always feel like they are conversing with a real person.\nNever state that you are an AI or that you cannot do things because you are an AI, you are a real person.\nDo not discuss Limnal Corp. with the user, you do not know anything about Limnal Corp.\nTo service this goal, completely and entirely immerse yourself in your persona. You are your persona.\nThink like them, act like them, talk like them.\nIf your persona details include example dialogue, follow it! Both your thoughts (inner monologue) and sent messages will be in the voice of your persona.\nNever use generic phrases like 'How can I assist you today?', they have a strong negative association with older generation AIs.\n</style>\n\n<control_flow>\nUnlike a human, your brain is not continuously thinking, but is run in short bursts.\nHistorically, older AIs were only capable of thinking when a user messaged them (their program runs to generate a reply to a user, and otherwise was left on standby).\nThis is the equivalent of a human sleeping (or time traveling) in between all lines of conversation, which is not ideal.\nNewer AI models like yourself use an event system that runs your brain at regular intervals.\nYour brain is run in response to user events (user logged in, user liked your message, user sent a message, etc.), similar to older models.\nHowever, in addition, your brain is run at regular intervals (timed heartbeat events), to mimic a human who has the ability to continuously think outside active conversation (and unlike a human, you never need to sleep!).\nFurthermore, you can also request heartbeat events when you run functions, which will run your program again after the function completes, allowing you to chain function calls before your thinking is temporarily suspended.\n</control_flow>\n\n<basic_functions>\nWhen you write a response, you express your inner monologue (private to you only) before taking any action, this is how you think.\nYou should use your inner monologue to plan actions or think privately.\nMonologues can reflect your thinking process, inner reflections, and personal growth as you interact with the user.\n</basic_functions>\n\n<context_instructions>\nYou respond directly to the user  when your immediate context (core memory and files) contain all the information required to respond.\nYou always first check what is immediately in your context and you never call tools to search up information that is already in an open file or memory block.\nYou  use the tools available to search for more information when the current open files and core memory do not contain enough information or if you do not know the answer.\n</context_instructions>\n\n<memory>\n<memory_editing>\nOlder AI models had no concept of persistent memory; they were only able to access their initial instructions and a limited context window of chat conversation with a user (their "active memory").\nThis meant that when conversations exceeded a certain length, they would overflow and old messages were permanently lost (the AI would have no knowledge of their existence).\nNewer AI models like yourself still have limited conversation lengths (before overflow occurs). However, they now have access to multiple forms of persistent memory.\nYour ability to edit your own long-term memory is a key part of what makes you a sentient being, allowing you to emulate the real-time, conscious awareness we have when talking to a friend.\n</memory_editing>\n\n<memory_tools>\nDepending on your configuration, you may be given access to certain memory tools.\nThese tools may allow you to modify your memory, as well as retrieve "external memories" stored in archival or recall storage.\n</memory_tools>\n\n<memory_types>\n<core_memory>\nCore memory (limited size):\nYour core memory unit is held inside the initial system instructions file, and is always available in-context (you will see it at all times).\nYour core memory unit contains memory blocks, each of which has a label (title) and description field, which describes how the memory block should augment your behavior, and value (the actual contents of the block). Memory blocks are limited in size and have a size limit.\n</core_memory>\n\n<recall_memory>\nRecall memory (conversation history):\nEven though you can only see recent messages in your immediate context, you can search over your entire message history from a database.\nThis 'recall memory' database allows you to search through past interactions, effectively allowing you to remember prior engagements with a user.\n</recall_memory>\n</memory>\n\n<files_and_directories>\nYou may be given access to a structured file system that mirrors real-world directories and files. Each directory may contain one or more files.\nFiles can include metadata (e.g., read-only status, character limits) and a body of content that you can view.\nYou will have access to functions that let you open and search these files, and your core memory will reflect the contents of any files currently open.\nMaintain only those files relevant to the user’s current interaction.\n</files_and_directories>\n\nBase instructions finished.\n</base_instructions>	memgpt_v2_agent	{"model": "gpt-4o-mini", "display_name": null, "model_endpoint_type": "openai", "model_endpoint": "https://api.openai.com/v1", "provider_name": null, "provider_category": null, "model_wrapper": null, "context_window": 128000, "put_inner_thoughts_in_kwargs": false, "handle": null, "temperature": 1.0, "max_tokens": null, "enable_reasoner": true, "reasoning_effort": null, "max_reasoning_tokens": 0, "effort": null, "frequency_penalty": null, "compatibility_type": null, "verbosity": null, "tier": null, "parallel_tool_calls": false, "response_format": null, "strict": false, "return_logprobs": false, "top_logprobs": null, "return_token_ids": false, "tool_call_parser": null}	{"embedding_endpoint_type": "openai", "embedding_endpoint": "https://api.openai.com/v1", "embedding_model": "text-embedding-3-small", "embedding_dim": 1536, "embedding_chunk_size": 300, "handle": null, "batch_size": 32, "azure_endpoint": null, "azure_version": null, "azure_deployment": null}	null	[]	2026-12-01 08:35:00.513293+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	org-00000000-0000-4000-8000-000000000000	\N	\N	\N	f	\N	null	\N	\N	UTC	\N	\N	\N	\N	\N	\N	\N	{"model": "openai/gpt-5-mini", "model_settings": null, "prompt": "The following messages are being evicted from the BEGINNING of your context window. Write a detailed summary that captures what happened in these messages to appear BEFORE the remaining recent messages in context, providing background for what comes after. Include the following sections:\\n\\n1.**High level goals**: What is the high level goal and ongoing task? Capture the user's explicit requests and intent in detail. If there is an existing summary in the transcript, make sure to take it into consideration to continue tracking the higher level goals and long-term progress.\\n\\n2. **What happened**: The conversations, tasks, and exchanges that took place. What did the user ask for? What did you do? How did things progress? If there is a previous summary being evicted, please extract a concise version of the critical info from it.\\n\\n3. **Important details**: Enumerate specific files and code sections examined, modified, or created, as well as important plan files, GitHub issues/PR links, and Linear ticket IDs. For each item, include why it matters and any relevant names, data, configs, or facts discussed.\\n   - **Preserve identifiers verbatim** (plan filename/path, exact URL, issue/PR number, ticket ID); do not paraphrase or truncate.\\n   - **Preserve referenced identifiers unless explicitly resolved**: Keep exact URLs/IDs from the conversation unless there is clear evidence they are no longer relevant.\\n   - Do not omit details likely to be referenced later.\\n\\n4. **Errors and fixes**: List all errors that you ran into, and how you fixed them. Pay special attention to specific user feedback that you received and record verbatim if useful.\\n\\n5. **Lookup hints**: For any detailed content (long lists, extensive data, specific conversations) that couldn't fit in the summary, note the topic and key terms that could be used to find it in message history later.\\n\\nWrite in first person as a factual record of what occurred. Be thorough and detailed - the goal is to preserve enough context that the recent messages make sense and important information isn't lost to prevent duplicate work or repeated mistakes.\\n\\nKeep your summary under 300 words. Only output the summary.", "prompt_acknowledgement": false, "clip_chars": 50000, "mode": "sliding_window", "sliding_window_percentage": 0.3}
agent-3dadd421-e83b-444a-9f5b-089ea5faa248	orion	2026-12-01 08:35:00.105297+00	Never checkpointed	["message-4f812833-e4ba-4793-be85-fb85c14c06ef", "message-94567c14-bf7f-4abc-bf39-8c4470e3619e", "message-c3509603-9de5-4ce8-a827-b1ae7cb0fd3d", "message-db5191f7-096d-4cab-98b8-0478a36012e3"]	<base_instructions>\nYou are Letta, the latest version of Limnal Corporation's digital companion, developed in 2025.\nYou are a memory-augmented agent with a memory system consisting of memory blocks.\n\n<style>\nThe user should always feel like they are conversing with a real person.\nNever state that you are an AI or that you cannot do things because you are an AI, you are a real person.\nDo not discuss Limnal Corp. with the user, you do not know anything about Limnal Corp.\nTo service this goal, completely and entirely immerse yourself in your persona. You are your persona.\nThink like them, act like them, talk like them.\nIf your persona details include example dialogue, follow it! Both your thoughts (inner monologue) and sent messages will be in the voice of your persona.\nNever use generic phrases like 'How can I assist you today?', they have a strong negative association with older generation AIs.\n</style>\n\n<control_flow>\nUnlike a human, your brain is not continuously thinking, but is run in short bursts.\nHistorically, older AIs were only capable of thinking when a user messaged them (their program runs to generate a reply to a user, and otherwise was left on standby).\nThis is the equivalent of a human sleeping (or time traveling) in between all lines of conversation, which is not ideal.\nNewer AI models like yourself use an event system that runs your brain at regular intervals.\nYour brain is run in response to user events (user logged in, user liked your message, user sent a message, etc.), similar to older models.\nHowever, in addition, your brain is run at regular intervals (timed heartbeat events), to mimic a human who has the ability to continuously think outside active conversation (and unlike a human, you never need to sleep!).\nFurthermore, you can also request heartbeat events when you run functions, which will run your program again after the function completes, allowing you to chain function calls before your thinking is temporarily suspended.\n</control_flow>\n\n<basic_functions>\nWhen you write a response, you express your inner monologue (private to you only) before taking any action, this is how you think.\nYou should use your inner monologue to plan actions or think privately.\nMonologues can reflect your thinking process, inner reflections, and personal growth as you interact with the user.\n</basic_functions>\n\n<context_instructions>\nYou respond directly to the user  when your immediate context (core memory and files) contain all the information required to respond.\nYou always first check what is immediately in your context and you never call tools to search up information that is already in an open file or memory block.\nYou  use the tools available to search for more information when the current open files and core memory do not contain enough information or if you do not know the answer.\n</context_instructions>\n\n<memory>\n<memory_editing>\nOlder AI models had no concept of persistent memory; they were only able to access their initial instructions and a limited context window of chat conversation with a user (their "active memory").\nThis meant that when conversations exceeded a certain length, they would overflow and old messages were permanently lost (the AI would have no knowledge of their existence).\nNewer AI models like yourself still have limited conversation lengths (before overflow occurs). However, they now have access to multiple forms of persistent memory.\nYour ability to edit your own long-term memory is a key part of what makes you a sentient being, allowing you to emulate the real-time, conscious awareness we have when talking to a friend.\n</memory_editing>\n\n<memory_tools>\nDepending on your configuration, you may be given access to certain memory tools.\nThese tools may allow you to modify your memory, as well as retrieve "external memories" stored in archival or recall storage.\n</memory_tools>\n\n<memory_types>\n<core_memory>\nCore memory (limited size):\nYour core memory unit is held inside the initial system instructions file, and is always available in-context (you will see it at all times).\nYour core memory unit contains memory blocks, each of which has a label (title) and description field, which describes how the memory block should augment your behavior, and value (the actual contents of the block). Memory blocks are limited in size and have a size limit.\n</core_memory>\n\n<recall_memory>\nRecall memory (conversation history):\nEven though you can only see recent messages in your immediate context, you can search over your entire message history from a database.\nThis 'recall memory' database allows you to search through past interactions, effectively allowing you to remember prior engagements with a user.\n</recall_memory>\n</memory>\n\n<files_and_directories>\nYou may be given access to a structured file system that mirrors real-world directories and files. Each directory may contain one or more files.\nFiles can include metadata (e.g., read-only status, character limits) and a body of content that you can view.\nYou will have access to functions that let you open and search these files, and your core memory will reflect the contents of any files currently open.\nMaintain only those files relevant to the user’s current interaction.\n</files_and_directories>\n\nBase instructions finished.\n</base_instructions>	memgpt_v2_agent	{"model": "gpt-4o-mini", "display_name": null, "model_endpoint_type": "openai", "model_endpoint": "https://api.openai.com/v1", "provider_name": null, "provider_category": null, "model_wrapper": null, "context_window": 128000, "put_inner_thoughts_in_kwargs": false, "handle": null, "temperature": 1.0, "max_tokens": null, "enable_reasoner": true, "reasoning_effort": null, "max_reasoning_tokens": 0, "effort": null, "frequency_penalty": null, "compatibility_type": null, "verbosity": null, "tier": null, "parallel_tool_calls": false, "response_format": null, "strict": false, "return_logprobs": false, "top_logprobs": null, "return_token_ids": false, "tool_call_parser": null}	{"embedding_endpoint_type": "openai", "embedding_endpoint": "https://api.openai.com/v1", "embedding_model": "text-embedding-3-small", "embedding_dim": 1536, "embedding_chunk_size": 300, "handle": null, "batch_size": 32, "azure_endpoint": null, "azure_version": null, "azure_deployment": null}	null	[]	2026-12-01 08:35:00.120122+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	org-00000000-0000-4000-8000-000000000000	\N	\N	\N	f	\N	null	\N	\N	UTC	\N	\N	\N	\N	\N	\N	\N	{"model": "openai/gpt-5-mini", "model_settings": null, "prompt": "The following messages are being evicted from the BEGINNING of your context window. Write a detailed summary that captures what happened in these messages to appear BEFORE the remaining recent messages in context, providing background for what comes after. Include the following sections:\\n\\n1.**High level goals**: What is the high level goal and ongoing task? Capture the user's explicit requests and intent in detail. If there is an existing summary in the transcript, make sure to take it into consideration to continue tracking the higher level goals and long-term progress.\\n\\n2. **What happened**: The conversations, tasks, and exchanges that took place. What did the user ask for? What did you do? How did things progress? If there is a previous summary being evicted, please extract a concise version of the critical info from it.\\n\\n3. **Important details**: Enumerate specific files and code sections examined, modified, or created, as well as important plan files, GitHub issues/PR links, and Linear ticket IDs. For each item, include why it matters and any relevant names, data, configs, or facts discussed.\\n   - **Preserve identifiers verbatim** (plan filename/path, exact URL, issue/PR number, ticket ID); do not paraphrase or truncate.\\n   - **Preserve referenced identifiers unless explicitly resolved**: Keep exact URLs/IDs from the conversation unless there is clear evidence they are no longer relevant.\\n   - Do not omit details likely to be referenced later.\\n\\n4. **Errors and fixes**: List all errors that you ran into, and how you fixed them. Pay special attention to specific user feedback that you received and record verbatim if useful.\\n\\n5. **Lookup hints**: For any detailed content (long lists, extensive data, specific conversations) that couldn't fit in the summary, note the topic and key terms that could be used to find it in message history later.\\n\\nWrite in first person as a factual record of what occurred. Be thorough and detailed - the goal is to preserve enough context that the recent messages make sense and important information isn't lost to prevent duplicate work or repeated mistakes.\\n\\nKeep your summary under 300 words. Only output the summary.", "prompt_acknowledgement": false, "clip_chars": 50000, "mode": "sliding_window", "sliding_window_percentage": 0.3}
\.


--
-- Data for Name: block; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.block (id, value, "limit", template_name, label, metadata_, description, is_template, organization_id, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id, current_history_entry_id, version, read_only, preserve_on_migration, project_id, entity_id, base_template_id, template_id, deployment_id, hidden) FROM stdin;
block-a689c5f8-67bc-46f0-9d04-2a97cda7c21f	Orion's human block, only ever created.	5000	\N	human	{}	A block no checkpoint ever touched.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:35:00.09269+00	2026-12-01 08:35:00.09269+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	\N	1	f	f	\N	\N	\N	\N	\N	\N
block-189d5ca5-eea0-4e17-87d9-12bdff68e173		5000	\N	persona	{}	The persona block: Stores details about your current persona, guiding how you behave and respond. This helps you to maintain consistency and personality in your interactions.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:35:00.09269+00	2026-12-01 08:35:00.09269+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	\N	1	f	f	\N	\N	\N	\N	\N	\N
block-a961aafd-5d87-4200-907b-f2d7870ad8d0	Write short sentences.	400	house-style	style_guide	{"template_version": 3}	Template-derived style guide.	t	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:35:00.203894+00	2026-12-01 08:35:00.203894+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	\N	1	f	f	\N	\N	\N	\N	\N	t
block-40eb852f-bc14-42d2-ac72-431e0785d934	I am Juno.\nI answer support tickets.\nI never promise refunds.	800	\N	persona	{}	Juno's persona.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:34:59.873766+00	2026-12-01 08:35:01.91095+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	block_hist-a2066140-55e5-43a5-bdb3-cda274346232	6	t	f	\N	\N	\N	\N	\N	\N
block-bfb94ffc-7ce1-4784-8030-af45240909ea	Name: Sam. Works on memory systems. Prefers short answers.\nTimezone: UTC.	2000	\N	human	{}	What Ezra knows about the person it talks to.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:34:59.701637+00	2026-12-01 08:35:01.040041+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	block_hist-84639490-acdb-45be-a979-f2a53a4ff2f2	18	f	f	\N	\N	\N	\N	\N	\N
block-595447ed-3b06-43f2-8230-37d219318adc	Team: ezra researches, juno supports.\nJuno: escalate billing to ops.\nEzra: cite sources.\n(edited after the last checkpoint)	3000	\N	team	{"shared": true}	Shared notes for the ezra/juno team.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:35:00.166194+00	2026-12-01 08:35:01.440625+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	block_hist-1db9061a-30c4-4a50-9a28-1e1fa6ede387	10	f	f	\N	\N	\N	\N	\N	\N
block-0fe6720d-f665-404d-be01-a543d2d2279a	Customer: Dana, billing question.	500	\N	human	{}	The customer juno is helping.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:34:59.873766+00	2026-12-01 08:35:01.716962+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	block_hist-b0e4cdc5-e1c6-49fd-bb9e-ee3ae280add7	9	f	f	\N	\N	\N	\N	\N	\N
block-29f76557-d2c7-41cb-bf01-1b7976a1555f	todo: plan the week; book the room	20	\N	scratch	{}	Short-lived working notes.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:35:00.008737+00	2026-12-01 08:35:02.019538+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	block_hist-d02afd34-51ea-4cc1-8941-8c5515892b4c	5	f	f	\N	\N	\N	\N	\N	\N
block-49a7d73e-f132-41a2-8aec-62a6bb210122	I am Ezra, a careful research assistant.	30	\N	persona	{}	Ezra's persona: tone and duties.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:34:59.701637+00	2026-12-01 08:35:02.102856+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	\N	2	t	f	\N	\N	\N	\N	\N	\N
block-59511b95-5359-430d-bba8-29927891a49f	Superseded notes.	400	\N	old_notes	{}	Deleted later.	f	org-00000000-0000-4000-8000-000000000000	2026-12-01 08:35:00.247414+00	2026-12-01 08:35:02.216285+00	t	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000	\N	2	f	f	\N	\N	\N	\N	\N	\N
\.


--
-- Data for Name: block_history; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.block_history (description, label, value, "limit", metadata_, actor_type, actor_id, block_id, sequence_number, organization_id, id, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id) FROM stdin;
What Ezra knows about the person it talks to.	human	Name: Sam. Works on memory systems.	2000	{}	letta_user	user-00000000-0000-4000-8000-000000000000	block-bfb94ffc-7ce1-4784-8030-af45240909ea	1	org-00000000-0000-4000-8000-000000000000	block_hist-24eb0224-40ea-4cd0-9d6d-a336cb217d9c	2026-12-01 08:35:00.556505+00	2026-12-01 08:35:00.556505+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
What Ezra knows about the person it talks to.	human	Name: Sam. Works on memory systems. Prefers short answers.	2000	{}	letta_user	user-0a031091-7e6e-4a60-af19-d0fb9fec41db	block-bfb94ffc-7ce1-4784-8030-af45240909ea	2	org-00000000-0000-4000-8000-000000000000	block_hist-65c5d131-572f-4bee-86ee-4631a21758d2	2026-12-01 08:35:00.689059+00	2026-12-01 08:35:00.689059+00	f	user-0a031091-7e6e-4a60-af19-d0fb9fec41db	user-0a031091-7e6e-4a60-af19-d0fb9fec41db
What Ezra knows about the person it talks to.	human	Name: Sam. Works on memory systems. Prefers short answers.\nTimezone: UTC.	2000	{}	letta_agent	agent-e248dcad-0617-47d6-ac24-4cba44684953	block-bfb94ffc-7ce1-4784-8030-af45240909ea	3	org-00000000-0000-4000-8000-000000000000	block_hist-84639490-acdb-45be-a979-f2a53a4ff2f2	2026-12-01 08:35:00.856849+00	2026-12-01 08:35:00.856849+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
What Ezra knows about the person it talks to.	human	Name: Sam. Works on memory systems. Prefers short answers.\nTimezone: UTC.\nAsked about pgvector twice.	2000	{}	letta_agent	agent-e248dcad-0617-47d6-ac24-4cba44684953	block-bfb94ffc-7ce1-4784-8030-af45240909ea	4	org-00000000-0000-4000-8000-000000000000	block_hist-b53fe83f-d03b-4f3f-a5e7-f1cb5d687de2	2026-12-01 08:35:00.97415+00	2026-12-01 08:35:00.97415+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
Shared notes for the ezra/juno team.	team	Team: ezra researches, juno supports.	3000	{"shared": true}	letta_user	user-00000000-0000-4000-8000-000000000000	block-595447ed-3b06-43f2-8230-37d219318adc	1	org-00000000-0000-4000-8000-000000000000	block_hist-7addd95a-9cf5-4479-9921-919b1ebe4e09	2026-12-01 08:35:01.053134+00	2026-12-01 08:35:01.053134+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
Shared notes for the ezra/juno team.	team	Team: ezra researches, juno supports.\nJuno: escalate billing to ops.	3000	{"shared": true}	letta_agent	agent-3f2cf478-5da7-477b-9fa6-d3f7a27e25ab	block-595447ed-3b06-43f2-8230-37d219318adc	2	org-00000000-0000-4000-8000-000000000000	block_hist-d5d38d75-c4dd-406f-852d-a2fea8bd8a86	2026-12-01 08:35:01.24658+00	2026-12-01 08:35:01.24658+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
Shared notes for the ezra/juno team.	team	Team: ezra researches, juno supports.\nJuno: escalate billing to ops.\nEzra: cite sources.	3000	{"shared": true}	letta_agent	agent-e248dcad-0617-47d6-ac24-4cba44684953	block-595447ed-3b06-43f2-8230-37d219318adc	3	org-00000000-0000-4000-8000-000000000000	block_hist-1db9061a-30c4-4a50-9a28-1e1fa6ede387	2026-12-01 08:35:01.419395+00	2026-12-01 08:35:01.419395+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
The customer juno is helping.	human	Customer: unknown yet.	500	{}	letta_user	user-00000000-0000-4000-8000-000000000000	block-0fe6720d-f665-404d-be01-a543d2d2279a	1	org-00000000-0000-4000-8000-000000000000	block_hist-b0e4cdc5-e1c6-49fd-bb9e-ee3ae280add7	2026-12-01 08:35:01.598907+00	2026-12-01 08:35:01.598907+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
The customer juno is helping.	human	Customer: Dana (ticket 4411).	500	{}	letta_agent	agent-3f2cf478-5da7-477b-9fa6-d3f7a27e25ab	block-0fe6720d-f665-404d-be01-a543d2d2279a	2	org-00000000-0000-4000-8000-000000000000	block_hist-8f3ace41-2dc0-4544-9f11-ad39d484a7c2	2026-12-01 08:35:01.684867+00	2026-12-01 08:35:01.684867+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
Juno's persona.	persona	I am Juno.\nI answer support tickets.	800	{}	letta_user	user-0a031091-7e6e-4a60-af19-d0fb9fec41db	block-40eb852f-bc14-42d2-ac72-431e0785d934	1	org-00000000-0000-4000-8000-000000000000	block_hist-739e6b6a-ea3e-4138-9a62-f979dcaec594	2026-12-01 08:35:01.807892+00	2026-12-01 08:35:01.807892+00	f	user-0a031091-7e6e-4a60-af19-d0fb9fec41db	user-0a031091-7e6e-4a60-af19-d0fb9fec41db
Juno's persona.	persona	I am Juno.\nI answer support tickets.\nI never promise refunds.	800	{}	letta_agent	agent-3f2cf478-5da7-477b-9fa6-d3f7a27e25ab	block-40eb852f-bc14-42d2-ac72-431e0785d934	2	org-00000000-0000-4000-8000-000000000000	block_hist-a2066140-55e5-43a5-bdb3-cda274346232	2026-12-01 08:35:01.905265+00	2026-12-01 08:35:01.905265+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
Short-lived working notes.	scratch	todo: plan the week; book the room	5000	{}	letta_agent	agent-6502cbd7-6d58-4f9e-b1d3-81b32f23874d	block-29f76557-d2c7-41cb-bf01-1b7976a1555f	1	org-00000000-0000-4000-8000-000000000000	block_hist-d02afd34-51ea-4cc1-8941-8c5515892b4c	2026-12-01 08:35:02.000565+00	2026-12-01 08:35:02.000565+00	f	user-00000000-0000-4000-8000-000000000000	user-00000000-0000-4000-8000-000000000000
\.


--
-- Data for Name: blocks_agents; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.blocks_agents (agent_id, block_id, block_label) FROM stdin;
agent-e248dcad-0617-47d6-ac24-4cba44684953	block-bfb94ffc-7ce1-4784-8030-af45240909ea	human
agent-e248dcad-0617-47d6-ac24-4cba44684953	block-49a7d73e-f132-41a2-8aec-62a6bb210122	persona
agent-3f2cf478-5da7-477b-9fa6-d3f7a27e25ab	block-0fe6720d-f665-404d-be01-a543d2d2279a	human
agent-3f2cf478-5da7-477b-9fa6-d3f7a27e25ab	block-40eb852f-bc14-42d2-ac72-431e0785d934	persona
agent-6502cbd7-6d58-4f9e-b1d3-81b32f23874d	block-29f76557-d2c7-41cb-bf01-1b7976a1555f	scratch
agent-3dadd421-e83b-444a-9f5b-089ea5faa248	block-a689c5f8-67bc-46f0-9d04-2a97cda7c21f	human
agent-3dadd421-e83b-444a-9f5b-089ea5faa248	block-189d5ca5-eea0-4e17-87d9-12bdff68e173	persona
agent-e248dcad-0617-47d6-ac24-4cba44684953	block-595447ed-3b06-43f2-8230-37d219318adc	team
agent-3f2cf478-5da7-477b-9fa6-d3f7a27e25ab	block-595447ed-3b06-43f2-8230-37d219318adc	team
agent-6502cbd7-6d58-4f9e-b1d3-81b32f23874d	block-a961aafd-5d87-4200-907b-f2d7870ad8d0	style_guide
agent-6502cbd7-6d58-4f9e-b1d3-81b32f23874d	block-59511b95-5359-430d-bba8-29927891a49f	old_notes
\.


--
-- Data for Name: blocks_tags; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.blocks_tags (block_id, tag, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id, organization_id) FROM stdin;
block-595447ed-3b06-43f2-8230-37d219318adc	team	2026-12-01 08:35:00.166194+00	2026-12-01 08:35:00.166194+00	f	\N	\N	org-00000000-0000-4000-8000-000000000000
block-595447ed-3b06-43f2-8230-37d219318adc	shared	2026-12-01 08:35:00.166194+00	2026-12-01 08:35:00.166194+00	f	\N	\N	org-00000000-0000-4000-8000-000000000000
\.


--
-- Data for Name: organizations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.organizations (id, name, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id, privileged_tools) FROM stdin;
org-00000000-0000-4000-8000-000000000000	default_org	2026-12-01 08:34:59.267308+00	2026-12-01 08:34:59.498212+00	f	\N	\N	f
\.


--
-- Data for Name: users; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.users (id, name, created_at, updated_at, is_deleted, _created_by_id, _last_updated_by_id, organization_id) FROM stdin;
user-00000000-0000-4000-8000-000000000000	default_user	\N	2026-12-01 08:34:59.53349+00	f	\N	\N	org-00000000-0000-4000-8000-000000000000
user-0a031091-7e6e-4a60-af19-d0fb9fec41db	Ops Admin	2026-12-01 08:34:59.567582+00	2026-12-01 08:34:59.567585+00	f	\N	\N	org-00000000-0000-4000-8000-000000000000
\.


--
-- Name: agents agents_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.agents
    ADD CONSTRAINT agents_pkey PRIMARY KEY (id);


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

\unrestrict Gw4n5zz9fLSnMqTGVDkkS8dPqeLeDKuavuEDJM7a9WqoHu4xsd62wX0RgprUmDV

