"""Sentence families for the evaluation set. Family A is the dev half, family B the test half:
written separately, in different registers, so the test phrasings were never seen in tuning.

{FIELD} slots are filled from independent generators (see make.py); [term] marks a clinical
term that must survive de-identification.
"""

from __future__ import annotations

# -- family A (dev): patient-side chat, short and colloquial --------------------------------
FAMILY_A = [
    "医生你好，我是{NAME}，手上起了好多[水疱]，痒得厉害",
    "我叫{NAME}，今年34岁，[湿疹]反反复复两年了",
    "谢谢{NAME}主任，我按您说的先涂[莫匹罗星软膏]",
    "@{NAME} 医生麻烦看下这张图",
    "我老公{NAME}也有[脚气]，会不会传染",
    "孩子他爸{NAME}说去{HOSP}看过，开了[氯雷他定]",
    "{NICK}昨天发烧到[38.6℃]，吃了[布洛芬]退了",
    "我妈{NAME}在{HOSP}住院，[血糖]一直控制不好",
    "上次是在{HOSP}拍的片子，您看下",
    "{HOSP}的医生说是[带状疱疹]",
    "我家在{ADDR}，附近只有个小诊所",
    "快递寄到{ADDR}就行，收件人{NAME}，电话{PHONE}",
    "有事打我电话{PHONE}，白天都在",
    "座机{PHONE}，晚上打这个",
    "{DATE}那天开始起疹子，到现在[两周]了",
    "化验单是{DATE}出的，[尿酸]有点高",
    "我身份证号{ID}，帮忙开个证明",
    "门诊号{MRN}，上次的病历在系统里",
    "订单号{ORDER}，药还没收到",
    "报告我发你邮箱了 {EMAIL}",
    "检查结果可以在这个链接看 {URL}",
    "我是{NAME}的女儿，替我爸问一下",
    "你好{NICK}，今天感觉怎么样",
    "{NAME}，{DATE}复诊，记得空腹",
    "我们村是{ADDR}，去县城要一个多小时",
    "之前在{HOSP}开的[二甲双胍]，吃了[三个月]",
    "麻烦转告{NAME}，明天上午来拿报告",
    "住院号：{MRN}  姓名：{NAME}",
    "我奶奶{NAME}，[85岁]，腿上长了个[包块]",
    "加我微信吧，手机号就是{PHONE}",
    "感谢{NAME}大夫，[皮疹]消了很多",
    "上个月{DATE}在{HOSP}做的[胃镜]",
    "家住{ADDR}，离{HOSP}很近",
    "我是{NAME}，{DATE}挂的号",
    "{NICK}说她也长过这种[痘痘]",
]

# -- family B (test): longer, more formal, physician-side and document-like -------------------
FAMILY_B = [
    "您好，患儿{NAME}家长，请补充一下[过敏史]",
    "本人{NAME}，于{DATE}出现[咳嗽]、[咽痛]，自行服用[阿莫西林]无效",
    "多谢{NAME}老师的耐心解答，我明白了",
    "回复@{NAME}：这个[斑块]需要做[皮肤镜]",
    "家父{NAME}现年[72岁]，既往[高血压]十余年",
    "我爱人{NAME}陪我一起来的，她在{HOSP}上班",
    "{NICK}的[体温]今早[37.9℃]，精神还可以",
    "婆婆{NAME}之前在{HOSP}做过[甲状腺]手术",
    "外院（{HOSP}）[CT]提示[肺结节]，建议随访",
    "转诊自{HOSP}，附带出院小结一份",
    "现住址：{ADDR}，联系人：{NAME}",
    "药品请邮寄至{ADDR}，{NAME}收，{PHONE}",
    "联系电话：{PHONE}（工作日）",
    "如有不适请拨打{PHONE}",
    "症状始于{DATE}，持续[十天]左右",
    "采样时间 {DATE}，[血红蛋白] 98 g/L",
    "证件号码：{ID}",
    "病案号 {MRN}，请核对",
    "支付流水号{ORDER}已退款",
    "影像资料已上传至 {URL} ，提取码 8k2m",
    "有问题可以发邮件到{EMAIL}咨询",
    "代{NAME}咨询，她不方便打字",
    "{NICK}你好，复查结果出来了吗",
    "{NAME}女士，{DATE}上午九点复诊",
    "老家是{ADDR}的，现在在外地打工",
    "曾于{HOSP}口服[甲硝唑]一周",
    "请通知{NAME}尽快来院",
    "就诊卡号：{MRN} 患者：{NAME}",
    # an age of 89 stays (HIPAA: only ages over 89 are identifiers, recognizers/dates.py)
    "外公{NAME}，今年[89岁]，近期[食欲差]",
    "手机{PHONE}，微信同号",
    "感谢{NAME}医师，用药后[瘙痒]明显减轻",
    "{DATE}在{HOSP}行[结肠镜]检查",
    "住在{ADDR}，步行到{HOSP}十分钟",
    "{NAME}，{DATE}预约成功",
    "听{NICK}说这个药效果不错",
]

FORM_LABELS_A = [
    ("姓名", "NAME"),
    ("送检医生", "NAME"),
    ("检验者", "NAME"),
    ("住院号", "MRN"),
    ("联系电话", "PHONE"),
    ("报告日期", "DATE"),
    ("送检单位", "HOSP"),
]
FORM_LABELS_B = [
    ("受检者", "NAME"),
    ("交款人", "NAME"),
    ("就诊人", "NAME"),
    ("审核医师", "NAME"),
    ("病历号", "MRN"),
    ("身份证号", "ID"),
    ("采样时间", "DATE"),
    ("开单医院", "HOSP"),
    ("家庭住址", "ADDR"),
]

# -- clinical sentences with no identifier (precision and terms kept) ------------------------
CLINICAL_SENTENCES = {
    "A": [
        "先用[炉甘石洗剂]，每天[3次]，一周后复查",
        "[高血压]的话[硝苯地平]要按时吃",
        "孩子喝了[金银花露]，还在吃[蒲地蓝消炎片]",
        "[黄连素]可以止泻，[蒙脱石散]也行",
        "[头孢克肟]吃了[五天]，[咳嗽]好一点了",
        "今天比昨天好，前天还[疼]得睡不着",
        "[空腹血糖] [6.9 mmol/L]，[糖化血红蛋白] [7.2%]",
        "建议去[皮肤科]再看看，可能是[银屑病]",
        "[奥美拉唑]饭前吃，[雷贝拉唑]也可以",
        "[王老吉]这种凉茶对[上火]没什么用",
        "[连花清瘟胶囊]和[布洛芬]不要一起吃太多",
        "最近[两个月][体重]掉了[5公斤]",
        "[甲状腺结节]3类，半年后复查[B超]",
        "[特比萘芬]乳膏每天[两次]，连用[四周]",
        "一家人平平安安最重要，别太焦虑",
        "[白细胞] [11.2×10^9/L]，[中性粒细胞]偏高",
    ],
    "B": [
        "予[卤米松乳膏]外用，每日[一次]，疗程[两周]",
        "[糖尿病]患者注意足部护理，监测[血糖]",
        "[坦索罗辛缓释片]睡前服用",
        "[马来酸氯苯那敏]会嗜睡，开车前别吃",
        "[左氧氟沙星]对[尿路感染]效果可以",
        "昨天夜里[腹痛]加重，今天早上好些",
        "[ALT] [56 U/L]，[AST] [40 U/L]，[轻度升高]",
        "建议[内分泌科]随诊，必要时查[胰岛素]",
        "[孟鲁司特钠]晚上吃，[氯雷他定]早上吃",
        "[藿香正气水]含酒精，吃[头孢]期间不要喝",
        "[阿托伐他汀]每晚[20mg]",
        "[荨麻疹]发作时可以冷敷",
        "[痛风]急性期先用[秋水仙碱]",
        "[龙胆泻肝丸]不建议长期服用",
        "保持平安心态，规律作息",
        "[血红蛋白] [98 g/L]，考虑[缺铁性贫血]",
    ],
}

# Every term that counts as clinical wherever it appears in a text of the set.
CLINICAL_TERMS = sorted(
    {
        term
        for family in (FAMILY_A, FAMILY_B, *CLINICAL_SENTENCES.values())
        for sentence in family
        for term in [part.split("]")[0] for part in sentence.split("[")[1:]]
    }
)
